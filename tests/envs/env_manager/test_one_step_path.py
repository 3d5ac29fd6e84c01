"""One env-step path: every manager steps an env by calling its ``step`` (``GymnasiumEnv.step`` keeps
the episode's bookkeeping, nothing else does); no compiled extension, no inlined copy."""

from __future__ import annotations

import functools
import importlib.util

import gymnasium as gym
import numpy as np
import pytest

from stride.envs import BaseEnvManager, GymnasiumEnv
from stride.testing.fake_envs import ImageGymEnv, make_gym_env
from stride.utils.errors import InvalidActionError, StrideError

KINDS = ["base", "subprocess", "async_subprocess"]


def test_no_compiled_extension_and_no_inline_kernel():
    assert importlib.util.find_spec("stride.envs.env_manager._fast_step") is None
    assert not hasattr(GymnasiumEnv, "step_kernel")


@pytest.mark.parametrize("name,n", [("CartPole-v1", 2), ("image", 4)])
def test_the_base_manager_calls_env_step_for_every_step(monkeypatch, name, n):
    calls = []
    plain_step = GymnasiumEnv.step

    def counted(self, action):
        calls.append(action)
        return plain_step(self, action)

    monkeypatch.setattr(GymnasiumEnv, "step", counted)
    kwargs = {"max_len": 7} if name == "image" else {}
    m = BaseEnvManager([functools.partial(make_gym_env, name, **kwargs) for _ in range(3)], {})
    m.seed(5)
    m.launch()
    try:
        issued = ends = 0
        for t in range(60):
            actions = {i: [t % n, np.int64(t % n)][(t + i) % 2] for i in m.ready_obs}
            issued += len(actions)
            ends += sum(ts.done for ts in m.step(actions).values())
        assert len(calls) == issued and ends >= 3
    finally:
        m.close()


class RewardKinds(gym.Env):
    """Rewards of several kinds (float, np.float32, int); episodes of 9 steps."""

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(-1e9, 1e9, shape=(2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(3)
        self._t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._t = 0
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self._t += 1
        reward = [0.1, np.float32(0.7), 3][self._t % 3]
        return np.array([self._t, float(action)], dtype=np.float32), reward, self._t == 9 and action == 0, self._t >= 9, {}


@pytest.mark.parametrize("kind", KINDS)
def test_episode_return_is_the_sum_of_the_rewards(make_manager, kind):
    m = make_manager(kind, env_fns=[lambda: GymnasiumEnv(RewardKinds()) for _ in range(2)])
    m.seed(0)
    m.launch()
    sums = {0: 0.0, 1: 0.0}
    ended = []
    while len(ended) < 4:
        for i, ts in m.step({i: 0 for i in m.ready_obs}).items():
            sums[i] += ts.reward
            if ts.done:
                assert ts.info["terminated"] and not ts.info["truncated"]
                assert ts.info["eval_episode_return"] == pytest.approx(sums[i], rel=1e-6)
                ended.append(i)
                sums[i] = 0.0


class Raiser(gym.Env):
    """Raises ``exc`` at its ``at``-th step."""

    def __init__(self, exc: BaseException, at: int) -> None:
        self.observation_space = gym.spaces.Box(0, 1, shape=(1,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self._exc, self._at, self._n = exc, at, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, dtype=np.float32), {}

    def step(self, action):
        self._n += 1
        if self._n == self._at:
            raise self._exc
        return np.ones(1, dtype=np.float32), 1.0, False, False, {}


@pytest.mark.parametrize("exc", [StrideError("a user error"), KeyboardInterrupt()])
def test_user_errors_and_interrupts_propagate(exc):
    m = BaseEnvManager([lambda: GymnasiumEnv(ImageGymEnv()), lambda: GymnasiumEnv(Raiser(exc, 2))], {})
    m.seed(0)
    m.launch()
    try:
        m.step({0: 1, 1: 1})
        with pytest.raises(type(exc)) as info:
            m.step({0: 1, 1: 1})
        assert info.value is exc
        assert m.step({0: 1, 1: 1})[1].done is False  # still usable after the error
    finally:
        m.close()


def test_an_env_that_is_not_ready_is_refused_before_anything_steps():
    m = BaseEnvManager([functools.partial(make_gym_env, "image") for _ in range(2)], {})
    m.seed(0)
    m.launch()
    try:
        before = {i: np.asarray(o)[0, 0, 0] for i, o in m.ready_obs.items()}
        with pytest.raises(StrideError, match=r"env 7 is not ready \(ready envs: \[0, 1\]\)"):
            m.step({0: 1, 7: 1})
        assert {i: np.asarray(o)[0, 0, 0] for i, o in m.ready_obs.items()} == before
    finally:
        m.close()


@pytest.mark.parametrize("bad", [2, -1, True, 1.0, np.float64(1.0), "1"])
def test_actions_outside_the_space_are_refused(bad):
    m = BaseEnvManager([functools.partial(make_gym_env, "CartPole-v1")], {})
    m.seed(0)
    m.launch()
    try:
        before = np.asarray(m.ready_obs[0]).copy()
        with pytest.raises(InvalidActionError):
            m.step({0: bad})
        assert np.array_equal(m.ready_obs[0], before)  # nothing stepped
        assert m.step({0: 1})[0].done is False
    finally:
        m.close()


def test_an_overridden_step_is_what_the_manager_calls():
    class Shaped(GymnasiumEnv):
        def step(self, action):
            ts = super().step(action)
            return ts._replace(reward=ts.reward * 10)

    m = BaseEnvManager([lambda: Shaped(ImageGymEnv()) for _ in range(2)], {})
    m.seed(0)
    m.launch()
    try:
        assert {i: ts.reward for i, ts in m.step({0: 1, 1: 2}).items()} == {0: 10.0, 1: 10.0}
    finally:
        m.close()


def test_a_renewed_env_starts_a_fresh_episode():
    class Flaky(gym.Wrapper):
        calls = 0

        def step(self, action):
            Flaky.calls += 1
            if Flaky.calls == 3:
                raise RuntimeError("boom")
            return self.env.step(action)

    m = BaseEnvManager([lambda: GymnasiumEnv(Flaky(ImageGymEnv()))], {"retry_type": "renew"})
    m.seed(0)
    m.launch()
    try:
        results = [m.step({0: 0})[0] for _ in range(4)]
        assert [ts.info.get("abnormal", False) for ts in results] == [False, False, True, False]
        assert results[3].obs[0, 0, 0] == 1  # a fresh episode, first step
    finally:
        m.close()
