"""stride.data.block_sampler.BlockSumSampler against a slow reference (a plain array of leaves):
bookkeeping after random writes, and sampling frequencies (chi-square) on both sampling paths."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stride.data.block_sampler import BlockSumSampler

weights = st.one_of(st.just(0.0), st.floats(1e-6, 1e3))
ops = st.lists(st.tuples(st.sampled_from(["set", "set_one", "set_hint", "zero", "set_all", "clear"]),
                         st.lists(st.integers(0, 10_000), min_size=1, max_size=20),
                         st.lists(weights, min_size=1, max_size=20)), min_size=1, max_size=25)


def check_against(s: BlockSumSampler, ref: np.ndarray) -> None:
    np.testing.assert_array_equal(s.leaves(), ref)
    b = s.BLOCK
    padded = np.zeros(s.block_sums().size * b)
    padded[: ref.size] = ref
    np.testing.assert_allclose(s.block_sums(), padded.reshape(-1, b).sum(axis=1), rtol=1e-12, atol=1e-12)
    assert s.total() == pytest.approx(ref.sum(), rel=1e-12, abs=1e-12)
    pos = ref[ref > 0]
    assert s.min_positive() == (pos.min() if pos.size else math.inf)
    assert s.bound >= ref.max()


@settings(max_examples=40, deadline=None)
@given(cap=st.integers(1, 300), ops=ops)
def test_bookkeeping_matches_reference(cap, ops):
    s = BlockSumSampler(cap)
    ref = np.zeros(cap)
    for op, slots, ws in ops:
        k = min(len(slots), len(ws))
        sl = np.asarray(slots[:k], dtype=np.int64) % cap
        w = np.asarray(ws[:k], dtype=np.float64)
        if op == "set":  # a repeated slot keeps its last value
            s.set(sl, w)
            ref[sl] = w
        elif op == "set_hint":  # callers may pass max/min of the batch
            s.set(sl, w, float(w.max()), float(w.min()))
            ref[sl] = w
        elif op == "set_one":
            s.set_one(int(sl[0]), float(w[0]))
            ref[sl[0]] = w[0]
        elif op == "zero":
            s.set(sl, np.zeros(k), 0.0, 0.0)
            ref[sl] = 0.0
        elif op == "set_all":
            ref = np.zeros(cap)
            ref[sl] = w
            s.set_all(ref)
        else:
            s.clear()
            ref[:] = 0.0
        check_against(s, ref)


def chi2_ok(counts: np.ndarray, leaves: np.ndarray) -> None:
    assert counts[leaves == 0].sum() == 0, "a zero leaf was sampled"
    pos = leaves > 0
    expected = counts.sum() * leaves[pos] / leaves[pos].sum()
    chi2 = float(((counts[pos] - expected) ** 2 / expected).sum())
    df = max(int(pos.sum()) - 1, 1)
    assert chi2 < df + 12 * np.sqrt(2 * df) + 10, f"chi2={chi2:.1f} df={df}"


@settings(max_examples=12, deadline=None)
@given(leaves=st.lists(st.one_of(st.just(0.0), st.floats(0.05, 30.0)), min_size=1, max_size=200).filter(
    lambda x: sum(x) > 0), path=st.sampled_from(["rejection", "blocks", "more"]), seed=st.integers(0, 3))
def test_sampling_frequency_proportional_to_leaf(leaves, path, seed):
    leaves = np.asarray(leaves)
    n = leaves.size
    s = BlockSumSampler(n + 37)  # a padded last block and empty slots past hi
    s.set(np.arange(n), leaves)
    rng = np.random.default_rng(seed)
    if path == "rejection":
        s.MAX_REJECTION_RATIO = math.inf
    elif path == "blocks":
        s.MAX_REJECTION_RATIO = 0.0
    counts = np.zeros(n + 37)
    draws = 0
    while draws < 60 * n + 600:
        if path == "more":  # later rejection rounds, as after a short first round
            slots, w = s._more(np.empty(0, dtype=np.intp), np.empty(0), 64, rng, n, s.bound * n / s.total())
        else:
            slots, w = s.sample_weighted(64, rng, n)
        assert slots.shape == (64,) and slots.dtype.kind == "i"
        np.testing.assert_array_equal(w, s.weights(slots))  # the leaves come back with the slots
        np.add.at(counts, slots, 1)
        draws += 64
    chi2_ok(counts[:n], leaves)
    assert counts[n:].sum() == 0


def test_stale_bound_is_tightened_and_skewed_leaves_use_blocks():
    s = BlockSumSampler(1000)
    s.set(np.arange(1000), np.ones(1000))
    s.set(np.array([3]), np.array([1e6]))  # the bound jumps to 1e6
    s.set(np.array([3]), np.array([1.0]))  # ... and stays there (only ever an upper bound)
    assert s.bound >= 1e6
    rng = np.random.default_rng(0)
    for _ in range(s.REFRESH):
        s.sample(8, rng)
    assert s.bound == 1.0  # recomputed once rejection looked too costly
    s.set(np.array([5]), np.array([1e9]))  # truly skewed: the two-level search answers
    slots = s.sample(64, rng)
    assert (slots == 5).mean() > 0.9


def test_min_positive_follows_overwrites_of_its_slot():
    s = BlockSumSampler(10)
    s.set(np.arange(10), np.arange(1.0, 11.0))
    assert s.min_positive() == 1.0
    s.set(np.array([0]), np.array([5.0]))  # the minimum's slot is raised: noticed on read
    assert s.min_positive() == 2.0
    s.set_one(1, 0.0)  # and cleared
    assert s.min_positive() == 3.0
    s.set(np.array([7, 7]), np.array([0.5, 9.0]))  # repeated slot: 9.0 is what stays
    assert s.min_positive() == 3.0
    s.clear()
    assert s.min_positive() == math.inf


def test_find_maps_prefix_sums_to_leaves_and_never_to_a_zero_leaf():
    w = np.random.default_rng(4).random(1000)
    w[::7] = 0.0
    s = BlockSumSampler(1000)
    s.set(np.arange(1000), w)
    cum = np.cumsum(w)
    u = np.random.default_rng(5).random(500) * cum[-1]
    np.testing.assert_array_equal(s.find(u), cum.searchsorted(u, side="right"))
    last = int(np.flatnonzero(w)[-1])
    assert s.find([cum[-1], cum[-1] * 2]).tolist() == [last, last]
