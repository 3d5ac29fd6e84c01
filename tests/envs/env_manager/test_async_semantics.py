"""What is particular to the async manager: it returns whichever envs are ready, each result once."""

from __future__ import annotations

import functools

import pytest

from stride.envs import AsyncSubprocessEnvManager
from stride.testing import make_fake_env


def _manager(tmp_path, **cfg):
    fns = [functools.partial(make_fake_env), functools.partial(make_fake_env, hang_at=2, once_file=str(tmp_path / "once"))]
    m = AsyncSubprocessEnvManager(fns, cfg)
    m.seed(0)
    m.launch()
    return m


def test_returns_the_ready_envs_without_waiting_for_a_hung_one(tmp_path):
    m = _manager(tmp_path, wait_num=1)
    try:
        out = m.step({0: 1, 1: 1})  # first steps: both come back
        while len(out) < 2:
            out.update(m.step({}))
        out = m.step({0: 1, 1: 1})  # env 1 now hangs forever
        assert set(out) == {0}
        assert sorted(m.ready_obs) == [0]
        for _ in range(3):
            assert set(m.step({0: 1})) == {0}  # env 0 goes on; env 1 is never reported twice nor invented
    finally:
        m.close()


def test_a_slow_env_result_comes_back_once_in_a_later_call():
    fns = [functools.partial(make_fake_env), functools.partial(make_fake_env, cpu_ms=500, max_len=100)]
    m = AsyncSubprocessEnvManager(fns, {"wait_num": 1})
    m.seed(0)
    m.launch()
    try:
        calls = [m.step({0: 1, 1: 1})]
        while not any(1 in c for c in calls):
            calls.append(m.step({0: 1} if 0 in m.ready_obs else {}))
        assert sum(1 in c for c in calls) == 1
        assert 1 not in calls[0] and 0 in calls[0]  # env 1 burns 0.5 s of CPU; env 0 does not wait for it
        assert len(calls) > 1
    finally:
        m.close()


def test_wait_num_is_bounded_by_step_wait_timeout(tmp_path):
    m = _manager(tmp_path, wait_num=2, step_wait_timeout=0.2)
    try:
        out = m.step({0: 1, 1: 1})
        while len(out) < 2:
            out.update(m.step({}))
        out = m.step({0: 1, 1: 1})  # env 1 hangs: wait_num=2 cannot be met, the timeout returns env 0
        assert set(out) == {0}
    finally:
        m.close()


def test_a_hung_env_is_recovered_when_step_timeout_is_set(tmp_path):
    m = _manager(tmp_path, wait_num=2, step_timeout=0.3)
    try:
        got = {0: [], 1: []}
        for _ in range(50):
            for i, ts in m.step({i: 1 for i in m.ready_obs}).items():
                got[i].append(ts)
            if len(got[1]) >= 4:
                break
        assert [ts.info.get("abnormal", False) for ts in got[1][:2]] == [False, True]
        assert not any(ts.info.get("abnormal") for ts in got[1][2:])
    finally:
        m.close()


@pytest.mark.parametrize("bad", [{"wait_num": 0}, {"envs_per_worker": 0}, {"context": "thread"}])
def test_bad_values_are_refused(bad):
    from stride.utils.errors import ConfigError

    with pytest.raises(ConfigError):
        AsyncSubprocessEnvManager([make_fake_env], bad)
