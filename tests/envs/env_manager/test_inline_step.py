"""``BaseEnvManager.step`` runs ``GymnasiumEnv.step``'s hot path inline (``step_kernel``): it must
give exactly what calling ``step`` gives, and step aside whenever ``step`` would do more."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest

from stride.envs import BaseEnvManager, GymnasiumEnv
from stride.testing.fake_envs import ImageGymEnv, make_gym_env
from stride.utils.errors import InvalidActionError


def _action(t: int, i: int, n: int):
    """Python ints, np.int64 (both inline) and np.int32 / 0-d arrays (through ``step``)."""
    a = (t * 7 + i * 3) % n
    return [a, np.int64(a), np.int32(a), np.array(a)][(t + i) % 4]


def _trace(m: BaseEnvManager, steps: int, n: int) -> list:
    out = []
    for t in range(steps):
        for i, ts in m.step({i: _action(t, i, n) for i in m.ready_obs}).items():
            info = {k: v for k, v in ts.info.items()}
            out.append((t, i, np.asarray(ts.obs).tobytes(), ts.reward, ts.done, info, type(ts)))
        out.append({i: np.asarray(o).tobytes() for i, o in m.ready_obs.items()})
    sd = m.state_dict()
    out.append((sd["episode_count"], sd["episodes"]))
    return out


@pytest.mark.parametrize("name,n", [("CartPole-v1", 2), ("image", 4)])
def test_inline_step_matches_the_wrapper_step(monkeypatch, name, n):
    kwargs = {"max_len": 7} if name == "image" else {}
    fns = [functools.partial(make_gym_env, name, **kwargs) for _ in range(3)]

    def trace() -> list:
        m = BaseEnvManager(fns, {})
        m.seed(5)
        m.launch()
        try:
            return _trace(m, 120, n)
        finally:
            m.close()

    inline = trace()
    monkeypatch.setattr(GymnasiumEnv, "step_kernel", lambda self: None)
    plain = trace()
    assert inline == plain
    assert sum(1 for row in inline if isinstance(row, tuple) and len(row) == 7 and row[4]) >= 5  # episodes ended


def test_step_kernel_only_for_a_reset_plain_discrete_env():
    env = make_gym_env("CartPole-v1")
    assert env.step_kernel() is None  # not reset yet: step must refuse
    env.reset(seed=0)
    kernel = env.step_kernel()
    assert kernel is not None and kernel[0] is env and (kernel[3], kernel[4]) == (0, 2)
    env.close()
    assert env.step_kernel() is None
    pendulum = make_gym_env("Pendulum-v1")  # Box actions: step checks and clips them
    pendulum.reset(seed=0)
    assert pendulum.step_kernel() is None
    pendulum.close()

    class Shaped(GymnasiumEnv):
        def step(self, action):
            ts = super().step(action)
            return ts._replace(reward=ts.reward * 10)

    shaped = Shaped(ImageGymEnv())
    shaped.reset(seed=0)
    assert shaped.step_kernel() is None  # an overridden step is always called


def test_manager_calls_an_overridden_step():
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


@pytest.mark.parametrize("bad", [2, -1, True, 1.0, np.float64(1.0), "1"])
def test_inline_step_refuses_actions_outside_the_space(bad):
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


def test_renewed_env_gets_a_fresh_kernel():
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
        old = m._kernels[0]
        results = [m.step({0: 0})[0] for _ in range(4)]
        assert [ts.info.get("abnormal", False) for ts in results] == [False, False, True, False]
        assert m._kernels[0] is not None and m._kernels[0][0] is not old[0]  # the renewed env's own
        assert results[3].obs[0, 0, 0] == 1  # a fresh episode, first step
    finally:
        m.close()


def test_no_kernel_when_the_episode_return_is_not_a_plain_attribute():
    class Tracked(GymnasiumEnv):  # the C loop adds to _episode_return in the instance __dict__
        @property
        def _episode_return(self):
            return self.__dict__.get("ret", 0.0)

        @_episode_return.setter
        def _episode_return(self, value):
            self.__dict__["ret"] = value

    env = Tracked(ImageGymEnv())
    env.reset(seed=0)
    assert env.step_kernel() is None
    plain = GymnasiumEnv(ImageGymEnv())
    plain.reset(seed=0)
    assert plain.step_kernel() is not None
