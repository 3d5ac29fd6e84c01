"""The worker protocol: named records that survive the wire, and the columns a worker's reply carries."""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

from stride.envs import SyncSubprocessEnvManager
from stride.envs.env_manager import protocol as p
from stride.envs.env_manager.hosted import HostedEnvs, crash, user_error
from stride.testing.fake_envs import FakeEnv
from stride.utils.errors import StrideError

RECORDS = [
    p.Step([0, 1], [1, np.int64(2)], [5, p.NO_RESET]),
    p.Reset([0], [None], [{"options": {"a": 1}}]),
    p.Replay([0, 1], [3, 4], [{}, {}], [[1, 2], []]),
    p.Seed([0, 1], [10, 11], False),
    p.Call([1], "random_action", ()),
    p.Close(),
    p.StepReply([1.0, None], [True, False], [{"x": 1}, {}], [np.zeros(3), None],
                {1: p.Crash("RuntimeError: boom")}, [0]),
    p.ResetReply([None, np.ones(2)], {0: p.NonFinite("reward nan", "FakeEnv")}),
    p.CallReply([None], {0: user_error(StrideError("bad action"))}),
    p.Ready(1234, True),
    p.BuildFailed("ImportError: no module"),
]


def _same(a: object, b: object) -> bool:
    return pickle.dumps(a) == pickle.dumps(b)


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_every_record_survives_the_wire_with_its_names(record: tuple) -> None:
    back = p.decode(p.encode(record))
    assert type(back) is type(record)
    assert back._fields == record._fields  # type: ignore[attr-defined]
    assert _same(back, record)
    assert _same(pickle.loads(pickle.dumps(record)), record)  # plain pickle works too


def test_a_user_error_comes_back_as_the_error_the_env_raised() -> None:
    failure = user_error(StrideError("action 7 is outside the action space"))
    error = p.decode(p.encode(p.CallReply([None], {0: failure}))).failures[0].error()  # type: ignore[union-attr]
    assert type(error) is StrideError and "action 7" in str(error)
    lock_error = user_error(_UnpicklableError(threading.Lock()))  # does not round-trip: its text instead
    assert isinstance(lock_error.error(), StrideError) and "_UnpicklableError" in lock_error.describe()


class _UnpicklableError(StrideError):
    def __init__(self, lock: object) -> None:
        super().__init__("holds a lock")
        self.lock = lock


def test_a_hosted_step_reply_is_columns_with_failures_by_position() -> None:
    envs = [FakeEnv(min_len=2, max_len=2), FakeEnv(step_error_at=1), FakeEnv()]
    hosted = HostedEnvs(envs, None, [4, 5, 6], finite=True)
    first = hosted.reset(p.Reset([0, 1, 2], [1, 2, 3], [{}, {}, {}]))
    assert not first.failures and all(o is not None for o in first.obs)
    reply = hosted.step(p.Step([0, 1, 2], [1, 1, 9], [7, 8, 9]))
    assert set(reply.failures) == {1, 2}
    assert isinstance(reply.failures[1], p.Crash) and "FakeEnvError" in reply.failures[1].text
    assert isinstance(reply.failures[2], p.UserError)  # action 9 is outside Discrete(3)
    assert reply.rewards[1:] == [None, None] and reply.obs[1:] == [None, None]
    assert reply.dones[0] is False and reply.in_place == []
    reply = hosted.step(p.Step([0], [1], [7]))  # the 2-step episode ends: reset in place next
    assert reply.dones == [True] and reply.in_place == [0] and reply.obs[0] is not None
    again = hosted.reset_in_place(p.Step([0], [1], [7]), reply.in_place)
    assert not again.failures and len(again.obs) == 1


def test_all_failed_keeps_the_in_place_positions() -> None:
    reply = p.StepReply([1.0, 2.0], [True, False], [{}, {}], [None, None], {}, [0])
    failed = reply.all_failed(crash(RuntimeError("x")))
    assert set(failed.failures) == {0, 1} and failed.in_place == [0] and failed.infos == [{}, {}]


def _lock_info_env() -> FakeEnv:
    class LockInfoEnv(FakeEnv):  # defined here: cloudpickled by value into the worker
        def step(self, action):  # type: ignore[no-untyped-def]
            ts = super().step(action)
            return ts._replace(info={**ts.info, "lock": threading.Lock()})

    return LockInfoEnv()


def test_a_result_that_cannot_be_pickled_is_a_one_line_user_error() -> None:
    m = SyncSubprocessEnvManager([_lock_info_env], {"context": "fork"})
    m.launch()
    try:
        with pytest.raises(StrideError, match="cannot send an env's result to the parent"):
            m.step({0: 1})
        assert 0 in m.ready_obs  # the env waits where it was
    finally:
        m.close()
