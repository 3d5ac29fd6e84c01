"""An env built directly (not from a compiled config) reads its class's declared defaults."""

from __future__ import annotations

from typing import Mapping, Optional

import gymnasium as gym
import numpy as np
import pytest

from stride.config import REQUIRED, Setting
from stride.envs.base_env import BaseEnv, BaseEnvTimestep, declared_defaults


class _Declares(BaseEnv[np.ndarray, int]):
    @classmethod
    def declared_config(cls) -> dict:
        return dict(env_id=REQUIRED, frame_skip=Setting(4, "[1, inf)"), mode="flat")

    def __init__(self, cfg: Optional[Mapping[str, object]] = None) -> None:
        super().__init__(cfg)
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def setting(self, key: str) -> object:
        return self._cfg[key]

    def reset(self, seed: Optional[int] = None, **kwargs: object) -> np.ndarray:
        return np.zeros(1, np.float32)

    def step(self, action: int) -> BaseEnvTimestep[np.ndarray]:
        return BaseEnvTimestep(np.zeros(1, np.float32), 0.0, True, {})

    def close(self) -> None:
        pass

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        pass


def test_declared_defaults_leave_required_keys_out() -> None:
    assert declared_defaults(_Declares) == {"frame_skip": 4, "mode": "flat"}


def test_an_env_built_directly_reads_the_declared_defaults_under_the_given_values() -> None:
    env = _Declares({"frame_skip": 2})
    assert env.setting("frame_skip") == 2 and env.setting("mode") == "flat"
    with pytest.raises(KeyError):
        env.setting("env_id")  # a required key stays missing: the env's own check names it
