"""Tiny deterministic envs and helpers for the worker tests.

``ChainEnv`` observations are ``[env_idx, episode, t]`` so every transition can be traced back to
its env, episode and step; the reward of step ``t`` is ``reward_fn(env_idx, episode, t)``.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional

import gymnasium as gym
import numpy as np
import torch

from stride.config import merge_config
from stride.envs.base_env import BaseEnv, BaseEnvTimestep
from stride.envs.env_manager.base import BaseEnvManager
from stride.policy import DQNPolicy


class ChainEnv(BaseEnv):
    """Episodes of ``length(env_idx, episode)`` steps; ends by termination, or truncation if ``truncate``.

    ``fail_at``: the step call number (1-based, counted over the instance's life) that raises once.
    """

    def __init__(self, env_idx: int = 0, length: Any = 5, truncate: bool = False, fail_at: Optional[int] = None,
                 reward_fn: Optional[Callable[[int, int, int], float]] = None) -> None:
        super().__init__({})
        self.env_idx = env_idx
        self._length = length if callable(length) else (lambda i, ep, _l=length: _l)
        self.truncate = truncate
        self.fail_at = fail_at
        self.reward_fn = reward_fn or (lambda i, ep, t: float(t + 1))
        self.episode = -1
        self.t = 0
        self.step_calls = 0
        self.ret = 0.0
        self._obs_space = gym.spaces.Box(-np.inf, np.inf, shape=(3,), dtype=np.float32)
        self._act_space = gym.spaces.Discrete(2)

    @property
    def observation_space(self) -> gym.spaces.Space:
        return self._obs_space

    @property
    def action_space(self) -> gym.spaces.Space:
        return self._act_space

    def _obs(self) -> np.ndarray:
        return np.array([self.env_idx, self.episode, self.t], dtype=np.float32)

    def reset(self, seed: Optional[int] = None, **kwargs: Any) -> np.ndarray:
        self.episode += 1
        self.t = 0
        self.ret = 0.0
        return self._obs()

    def step(self, action: Any) -> BaseEnvTimestep:
        self.step_calls += 1
        if self.fail_at is not None and self.step_calls == self.fail_at:
            raise RuntimeError("simulated env crash")
        r = float(self.reward_fn(self.env_idx, self.episode, self.t))
        self.t += 1
        self.ret += r
        if self.t >= self._length(self.env_idx, self.episode):
            info = {"terminated": not self.truncate, "truncated": self.truncate, "eval_episode_return": self.ret}
            return BaseEnvTimestep(self._obs(), r, True, info)
        return BaseEnvTimestep(self._obs(), r, False, {})


def make_manager(n: int, length: Any = 5, truncate: bool = False, fail_at: Optional[dict] = None,
                 reward_fn: Optional[Callable[[int, int, int], float]] = None) -> BaseEnvManager:
    """A BaseEnvManager over ``n`` ChainEnvs (env i gets ``env_idx=i``); ``length`` is an int or
    ``f(env_idx, episode)``; ``fail_at`` maps env_idx -> the step call that raises once."""
    fail_at = fail_at or {}

    def factory(i: int) -> Callable[[], ChainEnv]:
        return lambda: ChainEnv(env_idx=i, length=length, truncate=truncate, fail_at=fail_at.get(i), reward_fn=reward_fn)

    return BaseEnvManager([factory(i) for i in range(n)], {"retry_waiting_time": 0.0})


def make_policy(seed: int = 0, **patch: Any) -> DQNPolicy:
    user = {"model": {"obs_shape": 3, "action_shape": 2, "encoder_hidden_size_list": [8]},
            "collect": {"n_sample": 8}, "learn": {"batch_size": 4}}
    for k, v in patch.items():
        if isinstance(v, dict) and isinstance(user.get(k), dict):
            user[k] = {**user[k], **v}
        else:
            user[k] = copy.deepcopy(v)
    torch.manual_seed(seed)
    return DQNPolicy(merge_config(DQNPolicy.default_config(), user))


def key(obs: Any) -> tuple:
    """(env_idx, episode, t) of an observation."""
    a = np.asarray(obs)
    return int(a[0]), int(a[1]), int(a[2])
