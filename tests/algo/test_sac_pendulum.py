"""Learning test: SAC reaches Pendulum-v1's stop value (-250) within 30k env steps, confirmed by
a fresh 100-episode evaluation on differently seeded envs."""

from __future__ import annotations

import os

import numpy as np
import pytest

from stride.config import load_json_config
from stride.envs.gymnasium_env import GymnasiumEnv
from stride.entry import serial_pipeline
from stride.entry.utils import build_env_managers
from stride.utils.errors import ConfigError, InvalidActionError
from stride.worker import BaseSerialEvaluator
from stride.zoo.pendulum.config.pendulum_sac_config import create_config, main_config

ENV_STEP_BUDGET = 30_000
STOP_VALUE = -250


def test_act_scale_maps_unit_actions_onto_the_torque_range():
    env = GymnasiumEnv("Pendulum-v1", cfg=dict(act_scale=True))
    assert env.action_space.low.tolist() == [-1.0] and env.action_space.high.tolist() == [1.0]
    env.seed(0)
    env.reset()
    for a, torque in ((1.0, 2.0), (-0.5, -1.0), (0.0, 0.0), (-1.0, -2.0)):
        env.step(np.array([a], dtype=np.float32))
        assert env._env.unwrapped.last_u == pytest.approx(torque)
    with pytest.raises(InvalidActionError, match="outside the action space bounds"):
        env.step(np.array([1.5], dtype=np.float32))
    assert np.all(-1.0 <= env.random_action()) and np.all(env.random_action() <= 1.0)
    env.close()
    plain = GymnasiumEnv("Pendulum-v1")  # default off: the env's own bounds
    assert plain.action_space.high.tolist() == [2.0]
    with pytest.raises(ConfigError, match="act_scale=True needs a bounded Box"):
        GymnasiumEnv("CartPole-v1", cfg=dict(act_scale=True)).action_space


def _train_and_confirm(seed: int, tmp_path) -> dict:
    policy = serial_pipeline([main_config, create_config], seed=seed, max_env_step=ENV_STEP_BUDGET,
                             exp_name=str(tmp_path / f"seed{seed}"), progress=False)
    result = policy.result
    assert result["stop"], f"seed {seed}: did not reach {STOP_VALUE} within {ENV_STEP_BUDGET} env steps: {result}"
    # a fresh 100-episode evaluation of the final policy, on envs seeded differently from training
    cfg = load_json_config(os.path.join(result["exp_dir"], "total_config.json"))
    _, env = build_env_managers(cfg, seed=10_000 + seed)
    evaluator = BaseSerialEvaluator(dict(cfg.policy.eval.evaluator, confirm_episode=0), env, policy.eval_mode)
    _, returns = evaluator.eval(n_episode=100)
    env.close()
    assert len(returns) == 100
    assert np.mean(returns) >= STOP_VALUE, f"seed {seed}: fresh evaluation mean {np.mean(returns):.1f} < {STOP_VALUE}"
    return result


@pytest.mark.learning
@pytest.mark.timeout(900)
def test_sac_pendulum_seed0(tmp_path):
    _train_and_confirm(0, tmp_path)


@pytest.mark.learning
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_sac_pendulum_other_seeds(seed, tmp_path):
    _train_and_confirm(seed, tmp_path)
