"""DQN reaches CartPole's stop value with the collector and evaluator envs in subprocesses too."""

from __future__ import annotations

import copy

import pytest

from stride.entry import serial_pipeline
from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config


@pytest.mark.learning
@pytest.mark.timeout(900)
@pytest.mark.parametrize("manager", ["subprocess", "async_subprocess"])
def test_dqn_cartpole_with_subprocess_managers(manager, tmp_path):
    create = copy.deepcopy(create_config)
    create["env_manager"] = dict(type=manager)
    policy = serial_pipeline([main_config, create], seed=0, max_env_step=40_000,
                             exp_name=str(tmp_path / manager), progress=False)
    assert policy.result["stop"], policy.result
    assert policy.result["eval_return"] >= 195
