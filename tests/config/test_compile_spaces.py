"""compile_config builds no env: a continuous policy's action range comes from the action space its
caller hands over (the entries: their env manager's; a user: ``action_space=env.action_space``)."""

from __future__ import annotations

import copy
import json

import gymnasium as gym
import numpy as np
import pytest

from stride.config import compile_config
from stride.envs import GymnasiumEnv
from stride.utils.registry import ENV_REGISTRY
from stride.zoo.pendulum.config import pendulum_sac_config as zoo


class _Unbuildable(GymnasiumEnv):
    """A gymnasium env (its declared config) that cannot be built: building it is the failure."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("compile_config built an env")


ENV_REGISTRY.register("unbuildable_test", _Unbuildable)


def _compile(save_cfg: bool = False, **kwargs: object):
    create = dict(copy.deepcopy(zoo.create_config), env=dict(type="unbuildable_test"))
    return compile_config(copy.deepcopy(zoo.main_config), create, save_cfg=save_cfg, **kwargs)


def test_the_compiler_builds_no_env() -> None:
    cfg = _compile()
    assert cfg.env.type == "unbuildable_test" and cfg.env.env_id == "Pendulum-v1"
    assert cfg.policy.action_range is None  # left for the entry (or the user) to fill from the env


def test_the_action_space_given_fills_the_range_and_is_saved(tmp_path: object) -> None:
    cfg = _compile(action_space=gym.spaces.Box(-2.0, 2.0, (1,), np.float32), save_cfg=True,
                   exp_name=f"{tmp_path}/run")
    assert cfg.policy.action_range == [[-2.0], [2.0]]
    with open(f"{cfg.exp_name}/total_config.json") as f:
        assert json.load(f)["policy"]["action_range"] == [[-2.0], [2.0]]


@pytest.mark.parametrize("space", [gym.spaces.Discrete(3), gym.spaces.Box(-np.inf, np.inf, (1,), np.float32),
                                   gym.spaces.Box(-2, 2, (1,), np.int64)])
def test_a_space_without_finite_float_bounds_leaves_it_none(space: gym.Space) -> None:
    assert _compile(action_space=space).policy.action_range is None
