"""``BaseEnvManager.step``'s per-env loop in C (``_fast_step.c``) against the same loop in Python
(``_step_python``) and against no inline step at all: same timesteps, same ``ready_obs``, same
recorded actions and returns, same handling of crashes, user errors and interrupts, no leaked
references."""

from __future__ import annotations

import functools
import os
import shutil
import sys
import sysconfig

import gymnasium as gym
import numpy as np
import pytest

from stride.envs import BaseEnvManager, GymnasiumEnv
from stride.envs.env_manager import base as base_module
from stride.testing.fake_envs import ImageGymEnv, make_gym_env
from stride.utils.errors import StrideError

def _has_c_compiler() -> bool:
    cc = (sysconfig.get_config_var("CC") or "").split()
    return bool(cc) and shutil.which(cc[0]) is not None and os.path.exists(
        os.path.join(sysconfig.get_paths()["include"], "Python.h"))


# The C loop's tests run wherever the extension can be built; only a machine without a compiler
# (where the install falls back to the Python loop) skips them -- and test_the_extension_is_built
# fails if a compiler is there but the extension is not.
needs_c = pytest.mark.skipif(base_module._fast_run is None and not _has_c_compiler(),
                             reason="no C compiler here: the install runs the Python loop")
MODES = [pytest.param("c", marks=needs_c), "python", "plain"]


def test_the_extension_is_built_where_a_compiler_is():
    if _has_c_compiler():
        assert base_module._fast_run is not None, "a C compiler is here but _fast_step is not built (pip install -e .)"
    else:  # the install could not build it: the manager runs the Python loop
        assert base_module._fast_run is None


class RewardKinds(gym.Env):
    """Rewards of every kind the C loop adds differently (float, np.float32, int), crashes every
    ``crash_every`` steps, episodes of 9 steps, terminated or truncated."""

    def __init__(self, crash_every: int = 0) -> None:
        self.observation_space = gym.spaces.Box(-1e9, 1e9, shape=(2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(3)
        self._crash_every = crash_every
        self._t = self._calls = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._t = 0
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self._calls += 1
        if self._crash_every and self._calls % self._crash_every == 0:
            raise RuntimeError(f"crash at call {self._calls}")
        self._t += 1
        reward = [0.1, np.float32(0.7), 3][self._t % 3]
        obs = np.array([self._t, float(action)], dtype=np.float32)
        return obs, reward, self._t == 9 and action == 0, self._t >= 9, {"t": self._t}


def _manager(fns, mode: str, monkeypatch, cfg=None) -> BaseEnvManager:
    if mode == "plain":
        monkeypatch.setattr(GymnasiumEnv, "step_kernel", lambda self: None)
    m = BaseEnvManager(fns, cfg or {})
    m._use_fast_step = mode == "c"
    m.seed(3)
    m.launch()
    return m


def _action(t: int, i: int, n: int):
    a = (t * 5 + i * 3) % n
    return [a, np.int64(a), np.int32(a), a][(t + i) % 4]  # np.int32 goes through env.step


def _trace(m: BaseEnvManager, steps: int, n: int) -> list:
    rows = []
    for t in range(steps):
        out = m.step({i: _action(t, i, n) for i in m.ready_obs})
        for i, ts in out.items():
            info = {k: (v if k != "error" else v.split("(")[0]) for k, v in ts.info.items()}
            rows.append((t, i, None if ts.obs is None else np.asarray(ts.obs).tobytes(), ts.reward,
                         type(ts.reward), ts.done, info, type(ts)))
        rows.append(list(out))  # the order of the returned dict
        rows.append({i: np.asarray(o).tobytes() for i, o in m.ready_obs.items()})
    rows.append(m.state_dict())
    return rows


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("crash_every", [0, 11])
def test_every_loop_gives_the_same_run(monkeypatch, mode, crash_every):
    def trace(mode: str) -> list:
        with monkeypatch.context() as mp:
            fns = [functools.partial(lambda c: GymnasiumEnv(RewardKinds(c)), crash_every) for _ in range(3)]
            m = _manager(fns, mode, mp, {"max_retry": 2})
            try:
                return _trace(m, 90, 3)
            finally:
                m.close()

    reference = trace("plain")
    assert trace(mode) == reference
    ends = [r for r in reference if isinstance(r, tuple) and r[5]]
    assert len(ends) >= 20
    if crash_every:
        assert any(r[6].get("abnormal") for r in ends)
    # returns of mixed float / np.float32 / int rewards, summed in the same order
    assert any(r[6].get("eval_episode_return") for r in ends)


@pytest.mark.parametrize("mode", MODES)
def test_image_env_runs_agree(monkeypatch, mode):
    with monkeypatch.context() as mp:
        m = _manager([functools.partial(make_gym_env, "image", max_len=5) for _ in range(4)], "plain", mp)
        try:
            reference = _trace(m, 40, 4)
        finally:
            m.close()
    m = _manager([functools.partial(make_gym_env, "image", max_len=5) for _ in range(4)], mode, monkeypatch)
    try:
        assert _trace(m, 40, 4) == reference
    finally:
        m.close()


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


@pytest.mark.parametrize("mode", [pytest.param("c", marks=needs_c), "python"])
@pytest.mark.parametrize("exc", [StrideError("a user error"), KeyboardInterrupt()])
def test_user_errors_and_interrupts_propagate(monkeypatch, mode, exc):
    m = _manager([lambda: GymnasiumEnv(ImageGymEnv()), lambda: GymnasiumEnv(Raiser(exc, 2))], mode, monkeypatch)
    try:
        m.step({0: 1, 1: 1})
        with pytest.raises(type(exc)) as info:
            m.step({0: 1, 1: 1})
        assert info.value is exc and info.value.__traceback__ is not None
        assert m.step({0: 1, 1: 1})[1].done is False  # still usable after the error
    finally:
        m.close()


@pytest.mark.parametrize("mode", [pytest.param("c", marks=needs_c), "python"])
def test_an_env_that_is_not_ready_is_refused_before_anything_steps(monkeypatch, mode):
    m = _manager([functools.partial(make_gym_env, "image") for _ in range(2)], mode, monkeypatch)
    try:
        before = {i: np.asarray(o)[0, 0, 0] for i, o in m.ready_obs.items()}
        with pytest.raises(StrideError, match=r"env 7 is not ready \(ready envs: \[0, 1\]\)"):
            m.step({0: 1, 7: 1})
        assert {i: np.asarray(o)[0, 0, 0] for i, o in m.ready_obs.items()} == before
    finally:
        m.close()


class Constant(gym.Env):
    """Returns the same obs, reward and info objects at every step (for reference counts)."""

    OBS = np.zeros(1, dtype=np.float32)
    INFO: dict = {}
    REWARD = 0.25

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(0, 1, shape=(1,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self._t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._t = 0
        return self.OBS, {}

    def step(self, action):
        self._t += 1
        return self.OBS, self.REWARD, False, self._t >= 50, self.INFO


@needs_c
def test_c_loop_leaks_no_references(monkeypatch):
    m = _manager([lambda: GymnasiumEnv(Constant()) for _ in range(3)], "c", monkeypatch)
    actions = {0: np.int64(1), 1: np.int64(1), 2: np.int64(0)}  # Python's small ints are shared: not countable
    try:
        for _ in range(60):  # every episode ended once, so every path ran
            m.step(actions)
        for rec in m._episode_actions:
            del rec[:]
        counts = [sys.getrefcount(o) for o in (Constant.OBS, Constant.INFO, Constant.REWARD, *actions.values())]
        for _ in range(2000):
            m.step(actions)
            for rec in m._episode_actions:
                del rec[:]
        assert [sys.getrefcount(o) for o in (Constant.OBS, Constant.INFO, Constant.REWARD, *actions.values())] == counts
    finally:
        m.close()


@needs_c
def test_c_loop_steps_only_plain_dicts(monkeypatch):
    from collections import OrderedDict

    m = _manager([functools.partial(make_gym_env, "image") for _ in range(3)], "c", monkeypatch)
    try:
        actions = OrderedDict([(0, 3), (1, 2), (2, 1)])
        actions.move_to_end(0)  # iteration order 1, 2, 0; the dict underneath still holds 0, 1, 2
        out = m.step(actions)  # a dict subclass takes the Python loop, in the subclass's order
        assert list(out) == [1, 2, 0] and all(ts.obs[0, 0, 0] == 1 for ts in out.values())
        assert [a for rec in m._episode_actions for a in rec] == [3, 2, 1]
    finally:
        m.close()
