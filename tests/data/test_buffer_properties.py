"""Property tests (Hypothesis) for AdvancedReplayBuffer: sampling frequency and IS weights (i.i.d. and
distinct batches), FIFO eviction, max_use and staleness eviction, save/load without loss or duplication."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from stride.data import AdvancedReplayBuffer

from .stats_refs import ref_inclusion, with_ids

SETTINGS = settings(max_examples=25, deadline=None)


def item(i: int) -> dict:
    return {"obs": np.array([i, -i], dtype=np.int64), "reward": float(i)}


def make(cap: int, seed: int = 0, **cfg) -> AdvancedReplayBuffer:
    return AdvancedReplayBuffer({"replay_buffer_size": cap, "monitor": {"log_freq": 0}, **cfg}, seed=seed)


def live_ids(b: AdvancedReplayBuffer) -> list:
    return b.unique_ids[b.live_slots()].tolist()


@settings(max_examples=6, deadline=None)
@given(prios=st.lists(st.floats(0.05, 20.0), min_size=3, max_size=8), alpha=st.sampled_from([0.0, 0.4, 0.6, 1.0]),
       replace=st.booleans())
def test_sampling_frequency_proportional_to_priority_pow_alpha(prios, alpha, replace):
    """Appearances per batch: n P(i) with i.i.d. draws; n P(i) capped at 1 (the rest shared alike) for
    distinct batches."""
    n = len(prios)
    k = max(n // 2, 1)
    b = make(n, seed=0, alpha=alpha, replace=replace)
    b.push([{**item(i), "priority": p} for i, p in enumerate(prios)])
    batches = 2400 // k
    counts = np.zeros(n)
    for _ in range(batches):
        s = with_ids(b.sample_batch(k))
        np.add.at(counts, s["replay_unique_id"], 1)
    w = np.power(np.asarray(prios), alpha)
    share = k * w / w.sum() if replace else ref_inclusion(w, k)
    expected = batches * share
    m = np.ones(n, dtype=bool) if replace else share < 1.0  # (items in every distinct batch: checked exactly)
    assert (counts[~m] == batches).all()
    var = expected * (1.0 if replace else 1.0 - share)
    chi2 = float(((counts - expected)[m] ** 2 / var[m]).sum())
    df = int(m.sum())
    # mean ~df, sd ~sqrt(2 df): the threshold is > 12 sd away for every df here (seeded: deterministic)
    assert chi2 < df + 12 * np.sqrt(2 * df) + 10, f"chi2={chi2:.1f} df={df} counts={counts} expected={expected}"


@SETTINGS
@given(prios=st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=12), alpha=st.floats(0.0, 1.0),
       beta=st.floats(0.0, 1.0), extra=st.integers(0, 4))
def test_is_weights_equal_formula_and_at_most_one(prios, alpha, beta, extra):
    """IS_i = (N q_i)^-beta / max_j (N q_j)^-beta: q = P (i.i.d.) or pi / n (distinct batches)."""
    n = len(prios)
    k = max(n - extra, 1)
    for replace in (True, False):
        b = make(n + extra, seed=1, alpha=alpha, beta=beta, anneal_step=0, replace=replace)
        b.push([{**item(i), "priority": p} for i, p in enumerate(prios)])
        w = np.power(np.asarray(prios), alpha)
        q = w / w.sum() if replace else ref_inclusion(w, k) / k
        w_all = (n * q) ** -beta
        s = with_ids(b.sample_batch(k))
        expect = (n * q[s["replay_unique_id"]]) ** -beta / w_all.max()
        np.testing.assert_allclose(s["IS"], expect, rtol=1e-5, atol=1e-7)
        assert (s["IS"] <= 1.0 + 1e-6).all() and (s["IS"] > 0).all()
        items = b.sample(k)
        np.testing.assert_allclose([d["IS"] for d in items],
                                   (n * q[[d["replay_unique_id"] for d in items]]) ** -beta / w_all.max(), rtol=1e-5)


@settings(max_examples=15, deadline=None)
@given(cap=st.integers(1, 12), pushes=st.lists(st.integers(1, 8), min_size=1, max_size=8),
       priority=st.booleans(), storage=st.sampled_from(["memory", "file"]))
def test_fifo_eviction_keeps_the_newest_in_order(cap, pushes, priority, storage):
    b = make(cap, priority=priority, storage={"type": storage})
    pushed = []
    nxt = 0
    for k in pushes:
        batch = [item(i) for i in range(nxt, nxt + k)]
        b.push(batch if k > 1 else batch[0])
        pushed += list(range(nxt, nxt + k))
        nxt += k
        assert live_ids(b) == pushed[-cap:]
        assert b.storage.get_columns(b.live_slots())["obs"][:, 0].tolist() == pushed[-cap:]
    info = b.monitor_info()
    assert info["pushed"] - info["removed"] == b.count() == min(cap, len(pushed))
    if storage == "file":
        assert len(b.storage.files()) == b.count()
        b.close()


@SETTINGS
@given(n=st.integers(1, 10), max_use=st.integers(1, 4), batch=st.integers(1, 4), priority=st.booleans(),
       seed=st.integers(0, 3))
def test_max_use_eviction(n, max_use, batch, priority, seed):
    b = make(n, seed=seed, max_use=max_use, priority=priority)
    b.push([item(i) for i in range(n)])
    uses = np.zeros(n, dtype=int)
    evicted_at = {}
    for call in range(200):
        if b.count() < batch:
            break
        s = with_ids(b.sample_batch(batch))
        ids = s["replay_unique_id"]
        assert not any(i in evicted_at for i in ids.tolist()), "an evicted item was sampled"
        np.add.at(uses, ids, 1)
        for i in set(ids.tolist()):
            if uses[i] >= max_use:
                evicted_at[i] = call
        live = set(live_ids(b))
        assert live == set(range(n)) - set(evicted_at)
        assert all(uses[i] < max_use for i in live)
        np.testing.assert_array_equal(b.use_counts[b.live_slots()], uses[live_ids(b)])
    assert b.monitor_info()["removed_max_use"] == len(evicted_at)


@SETTINGS
@given(cits=st.lists(st.integers(0, 50), min_size=1, max_size=15), max_staleness=st.integers(0, 20),
       cur=st.integers(0, 70))
def test_staleness_eviction(cits, max_staleness, cur):
    n = len(cits)
    b = make(n, max_staleness=max_staleness)
    b.push([{**item(i), "collect_iter": c} for i, c in enumerate(cits)])
    s = with_ids(b.sample_batch(1, cur_learner_iter=cur))
    fresh = [i for i, c in enumerate(cits) if cur - c <= max_staleness]
    assert live_ids(b) == fresh
    if fresh:
        assert int(s["replay_unique_id"][0]) in fresh
    else:
        assert s is None
    assert b.monitor_info()["removed_staleness"] == n - len(fresh)


@settings(max_examples=10, deadline=None)
@given(cap=st.integers(1, 10), ops=st.lists(st.tuples(st.sampled_from(["push", "sample", "update"]), st.integers(1, 6)),
                                            max_size=15),
       max_use=st.sampled_from([2, float("inf")]), storage=st.sampled_from(["memory", "file"]),
       cap2=st.integers(0, 4))
def test_save_load_loses_and_duplicates_nothing(tmp_path_factory, cap, ops, max_use, storage, cap2):
    b = make(cap, seed=2, max_use=max_use, alpha=1.0, storage={"type": storage})
    nxt = 0
    for op, k in ops:
        if op == "push":
            b.push([item(i) for i in range(nxt, nxt + k)])
            nxt += k
        elif op == "sample":
            b.sample_batch(min(k, max(b.count(), 1)))
        elif b.count():
            slots = b.live_slots()[:k]
            b.update({"replay_unique_id": b.unique_ids[slots], "replay_buffer_idx": slots, "priority": np.arange(len(slots)) + 2.0})
    path = str(tmp_path_factory.mktemp("save") / "buf.npz")
    b.save_data(path)
    c = make(cap + cap2, seed=5, max_use=max_use, alpha=1.0, storage={"type": storage})
    c.load_data(path)
    ids_b, ids_c = live_ids(b), live_ids(c)
    assert ids_c == ids_b and len(set(ids_c)) == len(ids_c)
    if ids_b:
        obs_b = b.storage.get_columns(b.live_slots())["obs"]
        obs_c = c.storage.get_columns(c.live_slots())["obs"]
        np.testing.assert_array_equal(obs_b, obs_c)
        np.testing.assert_array_equal(obs_c[:, 0], ids_c)
        np.testing.assert_array_equal(b.priorities[b.live_slots()], c.priorities[c.live_slots()])
        np.testing.assert_array_equal(b.use_counts[b.live_slots()], c.use_counts[c.live_slots()])
        got = with_ids(c.sample_batch(c.count()))
        assert set(got["replay_unique_id"].tolist()) <= set(ids_b)
    c.push(item(10_000))
    assert live_ids(c)[-1] == b.next_id  # ids continue, never reused
    for buf_ in (b, c):
        buf_.close()
