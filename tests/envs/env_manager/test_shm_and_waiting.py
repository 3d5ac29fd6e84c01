"""Shared-memory slots (single writes, whole-block reads) and the spin-then-block wait: same results
whichever way the parent and the workers wait."""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
import pytest

from stride.envs.env_manager.shm import ObsBlock, obs_layout


def test_block_write_checks_shapes_and_read_all_copies_once():
    block = ObsBlock(obs_layout(gym.spaces.Box(0, 255, shape=(2, 3), dtype=np.uint8)), 3)
    try:
        for slot in range(3):
            block.write(slot, np.full((2, 3), slot, dtype=np.uint8))
        block.write(1, [[7, 7, 7], [7, 7, 7]])  # not an ndarray: the checked path
        with pytest.raises(ValueError):
            block.write(0, np.zeros(6, dtype=np.uint8))  # same size, wrong shape: never broadcast
        with pytest.raises(ValueError):
            block.write(0, np.zeros((1, 3), dtype=np.uint8))
        obs = block.read_all(copy=True)
        assert [o.tolist() for o in obs] == [[[s] * 3] * 2 for s in (0, 7, 2)]
        block.write(0, np.full((2, 3), 9, dtype=np.uint8))
        assert obs[0].tolist() == [[0] * 3] * 2  # copies: later writes do not show through
        assert block.read_all(copy=False)[0].tolist() == [[9] * 3] * 2  # views: they do
    finally:
        block.close()


def test_dict_block_read_all():
    space = gym.spaces.Dict({"a": gym.spaces.Box(-1, 1, shape=(2,), dtype=np.float32),
                             "b": gym.spaces.Box(0, 9, shape=(), dtype=np.int64)})
    block = ObsBlock(obs_layout(space), 2)
    try:
        block.write(0, {"a": np.array([0.5, -0.5], dtype=np.float32), "b": np.int64(3)})
        block.write(1, {"a": np.array([1.0, 1.0], dtype=np.float32), "b": np.int64(4)})
        with pytest.raises(ValueError):
            block.write(0, {"a": np.zeros(2, dtype=np.float32)})  # a key missing
        out = block.read_all()
        assert out[0]["a"].tolist() == [0.5, -0.5] and int(out[1]["b"]) == 4
    finally:
        block.close()


def _stream(m, steps: int, partial: bool) -> list:
    rng = np.random.default_rng(0)
    out = []
    for t in range(steps):
        ready = m.ready_obs
        ids = [i for i in ready if not partial or rng.random() < 0.6] or list(ready)[:1]
        for i, ts in sorted(m.step({i: (i + t) % 3 for i in ids}).items()):
            out.append((i, np.asarray(ts.obs).tolist(), ts.reward, ts.done))
    return out


@pytest.mark.parametrize("partial", [False, True], ids=["all-envs", "subsets"])
def test_spinning_or_blocking_waits_give_the_same_results(make_manager, partial):
    """spin_wait only changes how the parent and workers wait, never what they compute; whole
    replies (one block copy) and partial ones (a copy per env) hand out the same observations."""
    runs = []
    for spin in (0.0, 0.002):
        m = make_manager("subprocess", n=4, envs_per_worker=2, spin_wait=spin, env_kwargs=dict(min_len=3, max_len=9))
        m.seed(5)
        m.launch()
        runs.append(_stream(m, 60, partial))
        m.close()
    ref = make_manager("base", n=4, env_kwargs=dict(min_len=3, max_len=9))
    ref.seed(5)
    ref.launch()
    assert runs[0] == runs[1] == _stream(ref, 60, partial)


def test_spin_wait_polls_then_gives_up_and_turns_itself_back_on():
    import os

    from stride.envs.env_manager.spin import CAN_SPIN, SpinWait, make_poller

    if not CAN_SPIN:
        assert SpinWait(0.001).spin_s == 0.0 and not SpinWait(0.001).enabled
        return
    r, w = os.pipe()
    try:
        poller = make_poller(r)
        spin = SpinWait(0.002)
        assert spin.enabled
        assert spin.poll([poller], 0.0) is False and spin.enabled  # a zero budget is no verdict
        assert spin.poll([poller], float("inf")) is False  # nothing comes: it gives up ...
        assert not spin.enabled or spin.resume_at > 0  # ... switched off (or backed off: busy core)
        assert spin.poll([poller], float("inf")) is False
        spin.blocking()
        spin.blocked()  # a blocking wait that came back at once turns polling back on
        assert spin.enabled
        spin.resume_at = 0.0
        os.write(w, b"x")
        assert spin.poll([poller], float("inf")) is True
        assert SpinWait(0.0).poll([poller], float("inf")) is False  # 0 = always block
    finally:
        os.close(r)
        os.close(w)


def test_spin_wait_backs_off_only_for_strangers_seen_three_times_in_a_row(monkeypatch):
    """A long yield backs polling off only when more tasks are runnable than the machine has CPUs
    and the manager has processes (its own workers may all poll), three long yields in a row: a
    kernel thread that runs for a moment is no reason to stop, a CPU hog is. Driven through
    ``poll`` with every yield made long and the runnable counts given."""
    from stride.envs.env_manager import spin as spin_module

    class NeverReady:
        def poll(self, timeout):
            return []

    def long_yield():  # another process ran on this core for 0.2 ms
        end = time.perf_counter() + 2e-4
        while time.perf_counter() < end:
            pass

    monkeypatch.setattr(spin_module, "_NCPU", 2)
    monkeypatch.setattr(spin_module.os, "sched_yield", long_yield)
    counts: list = []
    monkeypatch.setattr(spin_module, "_runnable_tasks", lambda fd: counts.pop(0))
    wait = spin_module.SpinWait(0.05, own_processes=3)
    wait.spin_s = 0.05  # also where the platform has no poll/sched_yield: the rule is what is tested
    wait.enabled = True
    wait._loadavg = 10**6  # a descriptor is "open"; _runnable_tasks is replaced and never reads it

    counts[:] = [3, 4, 3, 4, 4, 4]  # the third stranger sighting in a row is the sixth long yield
    assert wait.poll([NeverReady()], 0.05) is False
    assert counts == [] and wait.resume_at > 0  # backed off ...
    assert wait.poll([NeverReady()], 0.05) is False and counts == []  # ... and polls no more for now

    wait.resume_at = 0.0
    counts[:] = [4, 3] + [2] * 1000  # strangers once, then only the manager's own processes
    assert wait.poll([NeverReady()], 0.01) is False  # polled the whole budget without backing off
    assert wait.resume_at == 0.0 and len(counts) < 1000

    wait._loadavg = -1  # no /proc/loadavg: every long yield counts as contention, as before
    wait.enabled, wait._sightings = True, 0
    counts[:] = []
    assert wait.poll([NeverReady()], 0.05) is False and wait.resume_at > 0
