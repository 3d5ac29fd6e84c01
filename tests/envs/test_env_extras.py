"""A Gymnasium env family behind an optional extra fails with one line naming the extra."""

from __future__ import annotations

import sys

import pytest

from stride.envs.gymnasium_env import GymnasiumEnv
from stride.utils.extras import MissingExtraError


def test_missing_mujoco_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco -> ModuleNotFoundError
    env = GymnasiumEnv("Hopper-v5")
    with pytest.raises(MissingExtraError) as info:
        env.reset()
    assert str(info.value) == 'MuJoCo envs need mujoco: pip install "stride-rl[mujoco]"'


def test_other_envs_need_no_extra():
    env = GymnasiumEnv("CartPole-v1")
    env.reset()
    env.close()
