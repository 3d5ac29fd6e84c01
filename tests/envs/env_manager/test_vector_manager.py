"""The 'vector' env manager's contract over a small pure-Python batched env (same-step autoreset):
per-env timesteps, the true final observation, terminated / truncated apart, idle envs, seeds
from the manager's streams, errors that step nothing. ale-py's batched env: tests/zoo/test_atari_vector.py."""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Optional, Tuple

import gymnasium as gym
import numpy as np
import pytest

from stride.envs import BaseEnv, BaseEnvTimestep, VectorEnvManager, create_env_manager
from stride.utils.errors import ConfigError, InvalidActionError, StrideError

LIMIT = 5  # env i's episodes are truncated after LIMIT steps; action 2 terminates at once


class CountVec(gym.vector.VectorEnv):
    """obs[i] = [seed of env i's episode, step in the episode]; reward = action; same-step autoreset."""

    def __init__(self, num_envs: int) -> None:
        self.num_envs = num_envs
        self.single_observation_space = gym.spaces.Box(0, 2**31, shape=(2,), dtype=np.int64)
        self.single_action_space = gym.spaces.Discrete(3)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self.state = np.zeros((num_envs, 2), dtype=np.int64)
        self.resets: List[Tuple[Optional[List[int]], List[int]]] = []
        self.closed = False

    def reset(self, *, seed: Any = None, options: Optional[Dict[str, Any]] = None) -> Tuple[np.ndarray, Dict[str, Any]]:
        mask = np.ones(self.num_envs, bool) if not options else options["reset_mask"]
        ids = np.flatnonzero(mask)
        self.resets.append((None if seed is None else list(seed), ids.tolist()))
        self.state[ids, 0] = 0 if seed is None else seed
        self.state[ids, 1] = 0
        return self.state.copy(), {}

    def step(self, actions: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Dict[str, Any]]:
        self.state[:, 1] += 1
        terminated = actions == 2
        truncated = ~terminated & (self.state[:, 1] >= LIMIT)
        reward = actions.astype(np.float64)
        info: Dict[str, Any] = {}
        done = terminated | truncated
        if done.any():
            info["final_obs"] = self.state.copy()
            self.state[done, 1] = 0
        return self.state.copy(), reward, terminated, truncated, info

    def close(self, **kwargs: Any) -> None:
        self.closed = True


class CountEnv(BaseEnv[np.ndarray, int]):
    """A BaseEnv whose only way to run is its batched env (its own step is not used here)."""

    made: List[CountVec] = []

    observation_space = gym.spaces.Box(0, 2**31, shape=(2,), dtype=np.int64)
    action_space = gym.spaces.Discrete(3)

    def reset(self, seed: Optional[int] = None, **kwargs: object) -> np.ndarray:
        raise AssertionError("the vector manager never resets a single env")

    def step(self, action: int) -> BaseEnvTimestep[np.ndarray]:
        raise AssertionError("the vector manager never steps a single env")

    def make_vector_env(self, num_envs: int, num_threads: int = 0) -> gym.vector.VectorEnv:
        vec = CountVec(num_envs)
        CountEnv.made.append(vec)
        return vec


def _manager(n: int = 3, **cfg: object) -> VectorEnvManager:
    return VectorEnvManager([functools.partial(CountEnv, cfg={}) for _ in range(n)], cfg)


def test_registered_and_built_from_config() -> None:
    m = create_env_manager({"type": "vector", "num_threads": 2}, [functools.partial(CountEnv, cfg={})] * 2)
    assert isinstance(m, VectorEnvManager) and m.env_num == 2


def test_final_obs_terminated_truncated_and_return() -> None:
    m = _manager(2)
    m.seed(0)
    m.launch()
    for _ in range(LIMIT - 1):
        ts = m.step({0: 1, 1: 0})
        assert not ts[0].done and not ts[1].done
    ts = m.step({0: 1, 1: 2})
    # env 0: truncated at LIMIT, its final obs shows step LIMIT; the next episode starts at step 0
    assert ts[0].done and ts[0].info["truncated"] and not ts[0].info["terminated"]
    assert ts[0].obs[1] == LIMIT and m.ready_obs[0][1] == 0
    assert ts[0].info["eval_episode_return"] == LIMIT * 1.0
    assert ts[1].done and ts[1].info["terminated"] and not ts[1].info["truncated"]
    assert ts[1].info["eval_episode_return"] == 2.0 and ts[1].obs[1] == LIMIT
    m.close()


def test_seeds_come_from_the_manager_streams_at_launch_and_reset() -> None:
    m = _manager(3)
    m.seed(7, dynamic_seed=False)
    m.launch()
    vec = CountEnv.made[-1]
    first = vec.resets[-1][0]
    assert first is not None and len(set(first)) == 3
    m.reset()
    assert vec.resets[-1][0] == first  # fixed seeds: every evaluation replays the same episodes
    m.seed(7, dynamic_seed=True)
    m.reset()
    assert vec.resets[-1][0] != first
    m.reset({1: {}})
    assert vec.resets[-1][1] == [1]
    with pytest.raises(StrideError, match="reset kwargs"):
        m.reset({1: {"options": {}}})
    m.close()


def test_idle_envs_are_not_reported_and_episode_num_is_kept() -> None:
    m = _manager(2, episode_num=1)
    m.launch()
    ts = m.step({0: 2})  # env 1 idles: moves with the batch, no timestep
    assert list(ts) == [0] and ts[0].done
    assert list(m.ready_obs) == [1] and m.ready_obs[1][1] == 1
    ts = m.step({1: 2})
    assert ts[1].done and m.done and m.ready_obs == {}
    m.close()


def test_bad_actions_and_unready_envs_step_nothing() -> None:
    m = _manager(2)
    m.launch()
    vec = CountEnv.made[-1]
    with pytest.raises(InvalidActionError, match="valid actions: 0..2"):
        m.step({0: 1, 1: 5})
    with pytest.raises(InvalidActionError):
        m.step({0: 1.5})
    assert vec.state[:, 1].tolist() == [0, 0]
    m.step({0: 2})
    m.close()
    with pytest.raises(StrideError, match="closed"):
        m.step({0: 1})


def test_refusals_are_one_line() -> None:
    with pytest.raises(ConfigError, match="same"):
        VectorEnvManager([functools.partial(CountEnv, cfg={"a": 1}), functools.partial(CountEnv, cfg={"a": 2})])
    with pytest.raises(ConfigError, match="nonfinite"):
        _manager(2, nonfinite="drop")
    m = _manager(2)
    m.launch()
    with pytest.raises(StrideError, match="cannot resume"):
        m.load_state_dict(m.state_dict())
    with pytest.raises(StrideError, match="videos"):
        m.enable_save_replay("/tmp/x")
    m.close()
    assert CountEnv.made[-1].closed
    m.close()  # idempotent


def test_an_env_without_a_native_batched_env_is_refused() -> None:
    from stride.testing.fake_envs import make_gym_env

    m = VectorEnvManager([functools.partial(make_gym_env, "CartPole-v1")] * 2)
    with pytest.raises(StrideError, match="no native batched env"):
        m.launch()
