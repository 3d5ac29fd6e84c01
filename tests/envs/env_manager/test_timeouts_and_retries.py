"""Finite default timeouts, each step and each reset timed against its own limit, warnings that
quote the configured limits, and resets that raise or hang retried (and renewed) by default."""

from __future__ import annotations

import functools
import logging
import math
import os
import time
import uuid

import gymnasium as gym
import numpy as np
import pytest

from stride.envs import AsyncSubprocessEnvManager, BaseEnvManager, GymnasiumEnv, SyncSubprocessEnvManager

SUBPROCESS = ["subprocess", "async_subprocess"]
KINDS = ["base"] + SUBPROCESS


class ResetFaults(gym.Env):
    """Episodes of ``length`` steps. Reset calls are counted across processes in the file
    ``counter``; at the calls listed in ``fail_at`` the reset raises, in ``hang_at`` it sleeps for
    an hour, in ``slow_at`` it takes ``slow_s`` seconds. ``info['instance']`` names the object."""

    def __init__(self, counter: str, fail_at=(), hang_at=(), slow_at=(), slow_s: float = 0.0, length: int = 3) -> None:
        self.observation_space = gym.spaces.Box(-10, 10, shape=(2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self._counter, self._fail, self._hang, self._slow, self._slow_s = counter, fail_at, hang_at, slow_at, slow_s
        self._len, self._t = length, 0
        self.instance = uuid.uuid4().hex[:8]

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        fd = os.open(self._counter, os.O_CREAT | os.O_APPEND | os.O_WRONLY)
        os.write(fd, b".")
        os.close(fd)
        call = os.path.getsize(self._counter)
        if call in self._hang:
            time.sleep(3600)
        if call in self._slow:
            time.sleep(self._slow_s)
        if call in self._fail:
            raise RuntimeError(f"reset failure at call {call}")
        self._t = 0
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self._t += 1
        info = {"instance": self.instance, "pid": os.getpid(), "t": self._t}
        return np.full(2, self._t, dtype=np.float32), 1.0, False, self._t >= self._len, info


def reset_faults_env(**kwargs) -> GymnasiumEnv:
    return GymnasiumEnv(ResetFaults(**kwargs))


def _steps(m, n: int) -> list:
    out = []
    for _ in range(n):
        out.extend(m.step({i: 0 for i in m.ready_obs}).values())
    return out


@pytest.mark.parametrize("cls", [BaseEnvManager, SyncSubprocessEnvManager, AsyncSubprocessEnvManager])
def test_default_timeouts_are_finite_and_resets_are_retried(cls):
    cfg = cls.default_config()
    assert math.isfinite(cfg["step_timeout"]) and cfg["step_timeout"] >= 10
    assert math.isfinite(cfg["reset_timeout"]) and cfg["reset_timeout"] >= cfg["step_timeout"]
    assert cfg["max_retry"] >= 3


@pytest.mark.parametrize("kind", SUBPROCESS)
def test_a_hung_step_is_caught_by_step_timeout_and_reported_as_configured(make_manager, kind, tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    # reset_timeout is long: a hung step must not wait for it (one limit per step, one per reset)
    m = make_manager(kind, n=2, envs_per_worker=2, step_timeout=0.5, reset_timeout=600,
                     env_kwargs=dict(hang_at=3, once_file=str(tmp_path / "once"), min_len=20, max_len=30))
    m.seed(0)
    m.launch()
    pids = list(m.worker_pids)
    out = _steps(m, 6)
    assert sum(1 for ts in out if ts.info.get("abnormal")) == 2  # both envs of the replaced worker
    assert m.worker_pids != pids
    msgs = [r.getMessage() for r in caplog.records if "starting a new process" in r.getMessage()]
    assert len(msgs) == 1
    assert "did not finish a step of env(s) [0, 1] within step_timeout=0.5 s per env, 2 envs (no reply after" in msgs[0]


@pytest.mark.parametrize("kind", SUBPROCESS)
def test_a_hung_reset_after_an_episode_is_caught_by_reset_timeout_and_retried(make_manager, kind, tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    counter = str(tmp_path / "resets")
    m = make_manager(kind, n=1, step_timeout=600, reset_timeout=0.5,
                     env_fns=[functools.partial(reset_faults_env, counter=counter, hang_at=(2,))])
    m.seed(0)
    m.launch()
    out = _steps(m, 8)
    assert not any(ts.info.get("abnormal") for ts in out)  # a failed reset loses no transition
    assert os.path.getsize(counter) >= 3
    msgs = [r.getMessage() for r in caplog.records if "starting a new process" in r.getMessage()]
    assert len(msgs) == 1
    assert "did not finish a reset (after its episode ended) of env(s) [0] within reset_timeout=0.5 s (no reply after" in msgs[0]


@pytest.mark.parametrize("kind", SUBPROCESS)
def test_a_slow_reset_is_not_taken_for_a_hung_step(make_manager, kind, tmp_path):
    counter = str(tmp_path / "resets")
    m = make_manager(kind, n=2, envs_per_worker=2, step_timeout=0.2, reset_timeout=60,
                     env_fns=[functools.partial(reset_faults_env, counter=counter, slow_at=(3, 4), slow_s=0.6)] * 2)
    m.seed(0)
    m.launch()
    pids = list(m.worker_pids)
    out = _steps(m, 8)
    assert os.path.getsize(counter) >= 4  # the slow resets (0.6 s each, three times step_timeout) ran
    assert not any(ts.info.get("abnormal") for ts in out) and m.worker_pids == pids


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("retry_type", ["reset", "renew"])
def test_a_reset_that_raises_is_retried_with_the_default_config(make_manager, kind, retry_type, tmp_path):
    counter = str(tmp_path / "resets")
    # the first reset at launch fails twice; the first reset after an episode fails once
    m = make_manager(kind, n=1, retry_type=retry_type, retry_waiting_time=0.0,
                     env_fns=[functools.partial(reset_faults_env, counter=counter, fail_at=(1, 2, 4))])
    m.seed(0)
    m.launch()
    out = _steps(m, 7)
    assert os.path.getsize(counter) >= 5
    assert not any(ts.info.get("abnormal") for ts in out)
    firsts = [ts.info["instance"] for ts in out if ts.info["t"] == 1]  # the env object of each episode
    assert len(firsts) == 3 and firsts[1] == firsts[2]  # no failure before the third episode
    # 'renew' rebuilt the env after the failed reset (in a new process for the subprocess managers)
    assert (firsts[0] != firsts[1]) == (retry_type == "renew")


@pytest.mark.parametrize("kind", SUBPROCESS)
def test_a_reset_that_hangs_at_launch_is_retried_in_a_new_worker(make_manager, kind, tmp_path):
    counter = str(tmp_path / "resets")
    m = make_manager(kind, n=2, reset_timeout=0.5, retry_waiting_time=0.0,
                     env_fns=[functools.partial(reset_faults_env, counter=counter, hang_at=(1,)),
                              functools.partial(reset_faults_env, counter=str(tmp_path / "other"))])
    m.seed(0)
    m.launch()
    assert sorted(m.ready_obs) == [0, 1] and os.path.getsize(counter) == 2
    assert len(_steps(m, 2)) >= 2
