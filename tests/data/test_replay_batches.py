"""Replay batches (issue 13), through the buffers' public API: distinct items, uniform subsets,
prioritized inclusion = n p^alpha / sum, IS weights of the design, max_use within a batch in every
mode, exact resume.

Statistical checks use fixed seeds (deterministic) and chi-square bounds ``df + 6 sqrt(2 df) + 10``
(:mod:`.stats_refs`: > 6 standard deviations), against exact numbers computed by slow references
(enumeration, fixed-point iteration); where a plausible wrong design is close, the test also shows
that it would fail (its expected chi-square lies far beyond the bound).
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import List, Tuple

import numpy as np
import pytest
import torch

from stride.data import AdvancedReplayBuffer, EpisodeReplayBuffer, NaiveReplayBuffer

from .stats_refs import bound, check_inclusion, chi2, ref_inclusion, successive_inclusion, with_ids


def item(i: int) -> dict:
    return {"obs": np.array([i, -i], dtype=np.int64), "reward": float(i)}


def episode(k: int, length: int = 2) -> list:
    return [{"obs": np.full(2, k, dtype=np.int64), "t": t} for t in range(length)]


def advanced(cap: int, seed: int = 0, replace: bool = False, **cfg) -> AdvancedReplayBuffer:
    """(``replace`` is only written when True: the default mode is what these tests check.)"""
    return AdvancedReplayBuffer({"replay_buffer_size": cap, "monitor": {"log_freq": 0}, **cfg,
                                 **({"replace": True} if replace else {})}, seed=seed)


# ---- distinct items in every batch ------------------------------------------------------------------
def _draw(b, size: int, list_form: bool, **kw) -> Tuple[List[int], List[int]]:
    """(ids, slots) of one batch, through ``sample`` (list of dicts / episodes) or ``sample_batch``."""
    out = b.sample(size, **kw) if list_form else with_ids(b.sample_batch(size, **kw))
    if out is None:
        return None
    if isinstance(out, dict):
        return out["replay_unique_id"].tolist(), out["replay_buffer_idx"].tolist()
    first = [x[0] if isinstance(x, list) else x for x in out]  # (an episode of `sample`: its first transition)
    return [int(d["replay_unique_id"]) for d in first], [int(d["replay_buffer_idx"]) for d in first]


@pytest.mark.parametrize("kind", ["naive", "uniform", "uniform_holes", "prioritized", "prioritized_big", "episode"])
def test_batches_hold_distinct_items(kind):
    n_items = 3000 if kind == "prioritized_big" else 100
    kw = {}
    if kind == "naive":
        b = NaiveReplayBuffer({"replay_buffer_size": 200}, seed=0)
    elif kind == "episode":
        b = EpisodeReplayBuffer({"replay_buffer_size": 200}, seed=0)
    else:
        b = advanced(4000, seed=0, priority=kind.startswith("prioritized"), alpha=1.0,
                     max_staleness=5 if kind == "uniform_holes" else float("inf"))
    rng = np.random.default_rng(0)
    if kind == "episode":
        b.push([episode(k) for k in range(n_items)])
    elif kind == "uniform_holes":  # every third item too old at the first sample: holes in the ring
        b.push([{**item(i), "collect_iter": 0 if i % 3 == 0 else 10} for i in range(n_items)])
        kw = {"cur_learner_iter": 12}
        with_ids(b.sample_batch(1, **kw))
        n_items = b.count()
    else:
        b.push([{**item(i), "priority": float(rng.random() * 10 + 0.1)} for i in range(n_items)])
    for k in range(48):
        size = [64, 63, n_items, n_items - 1, 2, 1][k % 6]
        ids, slots = _draw(b, size, k % 4 < 2, **kw)
        assert len(ids) == size and len(set(ids)) == size, f"{kind}: a batch of {size} repeats an item"
        if kind == "uniform_holes":
            assert all(i % 3 for i in ids) and b.count() == n_items
        if kind.startswith("prioritized") and k % 3 == 0:
            b.update({"replay_unique_id": ids, "replay_buffer_idx": slots, "priority": rng.random(size) + 0.01})
    assert _draw(b, n_items + 1, False, **kw) is None and _draw(b, n_items + 1, True, **kw) is None


# ---- uniform: every subset equally likely -------------------------------------------------------------
@pytest.mark.parametrize("kind,n_items,size,reps", [
    ("naive", 6, 3, 12000),  # population < 4 n: Floyd's algorithm
    ("naive", 16, 4, 40000),  # i.i.d. draws + repeat check
    ("uniform", 16, 4, 40000),
    ("episode", 12, 3, 15000),
])
def test_uniform_subsets_are_equally_likely(kind, n_items, size, reps):
    if kind == "naive":
        b = NaiveReplayBuffer({"replay_buffer_size": n_items}, seed=3)
        b.push([item(i) for i in range(n_items)])
    elif kind == "uniform":
        b = advanced(n_items, seed=3, priority=False)
        b.push([item(i) for i in range(n_items)])
    else:
        b = EpisodeReplayBuffer({"replay_buffer_size": n_items}, seed=3)
        b.push([episode(k) for k in range(n_items)])
    subsets = {s: j for j, s in enumerate(itertools.combinations(range(n_items), size))}
    counts = np.zeros(len(subsets))
    for _ in range(reps):
        if kind == "episode":
            ids = tuple(sorted(int(ep["replay_unique_id"]) for ep in with_ids(b.sample_batch(size))))
        else:
            ids = tuple(sorted(with_ids(b.sample_batch(size))["replay_unique_id"].tolist()))
        assert len(set(ids)) == size
        counts[subsets[ids]] += 1
    assert chi2(counts, np.full(len(subsets), reps / len(subsets))) < bound(len(subsets) - 1)


def test_uniform_pairs_with_holes_are_equally_likely():
    """Uniform over the live items when evictions left holes (the live slots as the population)."""
    b = advanced(60, seed=5, priority=False, max_staleness=5)
    b.push([{**item(i), "collect_iter": 0 if i % 3 == 0 else 10} for i in range(60)])
    pairs = Counter()
    reps, size = 20000, 5
    for _ in range(reps):
        ids = with_ids(b.sample_batch(size, cur_learner_iter=12))["replay_unique_id"].tolist()
        assert len(set(ids)) == size
        pairs.update(itertools.combinations(sorted(ids), 2))
    live = [i for i in range(60) if i % 3]
    all_pairs = list(itertools.combinations(live, 2))
    counts = np.array([pairs[p] for p in all_pairs], dtype=float)
    assert counts.sum() == reps * size * (size - 1) / 2  # no pair with an evicted item
    expected = np.full(len(all_pairs), reps * size * (size - 1) / (len(live) * (len(live) - 1)))
    assert chi2(counts, expected) < bound(len(all_pairs) - 1)


# ---- prioritized: inclusion probability n p^alpha / sum -----------------------------------------------
def _inclusion_counts(b: AdvancedReplayBuffer, size: int, reps: int, n_items: int) -> np.ndarray:
    counts = np.zeros(n_items)
    for _ in range(reps):
        ids = with_ids(b.sample_batch(size))["replay_unique_id"]
        assert np.unique(ids).size == size
        counts[ids] += 1
    return counts


@pytest.mark.parametrize("name,prios,alpha,size,reps", [
    ("sampford_skewed", [1, 2, 3, 4, 5, 6, 7, 8], 1.0, 2, 60000),
    ("sampford_alpha", [0.5, 8.0, 2.0, 30.0, 1.0, 4.0, 16.0, 0.25, 3.0], 0.6, 2, 30000),
    ("systematic", [1 + (i % 7) for i in range(40)], 1.0, 16, 6000),
    ("certainty", [50, 1, 2, 3, 4, 5, 6, 7, 8, 9], 1.0, 4, 20000),
    ("two_certain", [100, 60, 1, 1, 2, 2, 3, 3, 4], 0.8, 4, 20000),
    ("sampford_big", [1 + (i * 7919) % 13 for i in range(600)], 0.6, 8, 12000),
])
def test_prioritized_inclusion_is_n_times_p_alpha_share(name, prios, alpha, size, reps):
    n_items = len(prios)
    b = advanced(n_items, seed=11, alpha=alpha)
    b.push([{**item(i), "priority": float(p)} for i, p in enumerate(prios)])
    pi = ref_inclusion(np.power(prios, alpha), size)
    check_inclusion(_inclusion_counts(b, size, reps, n_items), pi, reps)
    if name == "sampford_skewed":  # successive sampling would fail this test by far
        succ = successive_inclusion(prios, size)
        noncentral = reps * float(((succ - pi) ** 2 / (pi * (1 - pi))).sum())
        assert noncentral > 4 * bound(n_items)


# ---- IS weights -----------------------------------------------------------------------------------
@pytest.mark.parametrize("replace", [False, True])
def test_is_weights_follow_the_design_and_are_unbiased(replace):
    """IS_i = (N q_i)^-beta / max_j (N q_j)^-beta, q_i = P(i) (i.i.d.) or pi_i / n (distinct); at
    beta = 1 the IS-weighted batch sum has expectation (n min_j q_j) sum_i y_i (Horvitz-Thompson)."""
    prios = np.array([50.0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    n, reps = 4, 20000
    y = np.array([30.0, 5, 1, 8, 2, 9, 3, 7, 4, 6])  # (not proportional to pi: the estimate varies)
    b = advanced(10, seed=4, alpha=1.0, beta=1.0, anneal_step=0, replace=replace)
    b.push([{**item(i), "priority": float(p)} for i, p in enumerate(prios)])
    q = prios / prios.sum() if replace else ref_inclusion(prios, n) / n
    is_ref = q.min() / q  # beta = 1
    est = np.empty(reps)
    for r in range(reps):
        s = with_ids(b.sample_batch(n))
        ids = s["replay_unique_id"]
        np.testing.assert_allclose(s["IS"], is_ref[ids], rtol=1e-6)
        est[r] = float((s["IS"] * y[ids]).sum())
    target = n * q.min() * y.sum()
    tol = 6 * est.std() / np.sqrt(reps) + 1e-5 * target  # (IS are float32)
    assert abs(est.mean() - target) < tol
    if not replace:  # the with-replacement formula applied to distinct batches would be biased
        wrong = (prios.min() / prios)
        pi = ref_inclusion(prios, n)
        assert abs(float((pi * wrong * y).sum()) - target) > 10 * tol


def test_is_weights_beta_annealing_in_distinct_batches():
    prios = np.array([50.0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    b = advanced(10, seed=0, alpha=0.5, beta=0.4, anneal_step=10)
    b.push([{**item(i), "priority": float(p)} for i, p in enumerate(prios)])
    w = np.sqrt(prios)
    q = ref_inclusion(w, 4) / 4
    for k in range(12):
        beta = min(1.0, 0.4 + 0.6 * k / 10)
        s = with_ids(b.sample_batch(4))
        ids = s["replay_unique_id"]
        np.testing.assert_allclose(s["IS"], (q[ids] / q.min()) ** -beta, rtol=1e-5)
        assert (s["IS"] <= 1.0 + 1e-6).all()


# ---- max_use within a batch, in every mode --------------------------------------------------------------
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("priority", [False, True])
def test_max_use_never_exceeded_within_a_batch(replace, priority):
    b = advanced(12, seed=7, priority=priority, replace=replace, max_use=3, alpha=1.0)
    b.push([{**item(i), "priority": 1.0 + 30.0 * (i == 0)} for i in range(12)])  # item 0 drawn most
    uses = Counter()
    evicted = set()
    batches = 0
    while True:
        s = with_ids(b.sample_batch(5))
        if s is None:
            assert b.count() < 5
            break
        batches += 1
        ids = s["replay_unique_id"].tolist()
        assert not evicted & set(ids), "an evicted item was sampled"
        c = Counter(ids)
        if not replace:
            assert max(c.values()) == 1
        for i, k in c.items():
            assert uses[i] + k <= 3, f"item {i}: {uses[i]} uses + {k} copies > max_use 3"
            uses[i] += k
            if uses[i] == 3:
                evicted.add(i)
        assert b.count() == 12 - len(evicted)
        if priority:
            b.update({"replay_unique_id": s["replay_unique_id"], "replay_buffer_idx": s["replay_buffer_idx"],
                      "priority": np.ones(5)})
    info = b.monitor_info()
    assert info["removed_max_use"] == len(evicted) == 12 - b.count()
    assert info["sampled"] == 5 * batches == sum(uses.values())


def test_replace_true_keeps_iid_draws_and_caps_only_excess_copies():
    b = advanced(2, seed=0, replace=True, max_use=3, alpha=1.0)
    b.push([{**item(0), "priority": 1e-6}, {**item(1), "priority": 1e6}])  # item 1 drawn almost surely
    assert with_ids(b.sample_batch(2))["replay_unique_id"].tolist() == [1, 1] and b.count() == 2
    s = with_ids(b.sample_batch(2))  # one use left to item 1: the second copy is drawn again, from item 0
    assert s["replay_unique_id"].tolist() == [1, 0] and b.count() == 1 and b.live_slots().tolist() == [0]
    assert b.monitor_info()["removed_max_use"] == 1
    u = advanced(4, seed=1, replace=True, priority=False)
    u.push([item(i) for i in range(4)])
    ids = np.concatenate([with_ids(u.sample_batch(4))["replay_unique_id"] for _ in range(50)])
    assert any(np.unique(ids[k:k + 4]).size < 4 for k in range(0, 200, 4))  # repeats allowed without max_use


# ---- resume ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["prioritized", "prioritized_replace", "uniform_holes", "naive", "episode"])
def test_resume_is_exact(kind, tmp_path):
    def make(seed):
        if kind == "naive":
            return NaiveReplayBuffer({"replay_buffer_size": 50}, seed=seed)
        if kind == "episode":
            return EpisodeReplayBuffer({"replay_buffer_size": 50}, seed=seed)
        return advanced(50, seed=seed, priority=kind != "uniform_holes", max_use=4, max_staleness=30,
                        replace=kind == "prioritized_replace", alpha=0.7)

    def batch_ids(b, k):
        kw = {"cur_learner_iter": k} if kind not in ("naive", "episode") else {}
        return _draw(b, 6, k % 2 == 0, **kw)

    def feed(b, k):
        if kind == "episode":
            b.push([episode(100 + k)])
        else:
            b.push([{**item(100 + k), "collect_iter": k}] if kind != "naive" else [item(100 + k)])

    a = make(3)
    for k in range(40):
        feed(a, k)
    for k in range(10):
        batch_ids(a, k)
    path = tmp_path / "buf.pt"
    torch.save(a.state_dict(), path)
    c = make(99)
    c.load_state_dict(torch.load(path, weights_only=True))
    for k in range(10, 40):
        x, y = batch_ids(a, k), batch_ids(c, k)
        assert x == y
        if x is not None:
            assert len(set(x[0])) == len(x[0]) or kind == "prioritized_replace"
            if kind.startswith("prioritized"):
                info = {"replay_unique_id": x[0], "replay_buffer_idx": x[1], "priority": np.arange(6) + 1.0 + k}
                a.update(info)
                c.update(info)
        feed(a, k)
        feed(c, k)


# ---- the pieces --------------------------------------------------------------------------------------
def test_default_configs_name_replace():
    for cls in (NaiveReplayBuffer, AdvancedReplayBuffer, EpisodeReplayBuffer):
        assert cls.default_config()["replace"] is False


