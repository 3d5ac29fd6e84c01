"""SumTree against a brute-force reference (plain cumulative sums over a NumPy array)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stride.data.sum_tree import SumTree


def brute_find(leaves: np.ndarray, u: float) -> int:
    """First leaf whose cumulative sum exceeds u; past the total, the last positive leaf."""
    csum = np.cumsum(leaves)
    hits = np.flatnonzero(csum > u)
    return int(hits[0]) if hits.size else int(np.flatnonzero(leaves > 0)[-1])


ops = st.lists(
    st.tuples(
        st.lists(st.integers(0, 10_000), min_size=1, max_size=20),  # raw indices (taken mod capacity)
        st.lists(st.one_of(st.just(0.0), st.floats(0.0, 100.0)), min_size=1, max_size=20),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(capacity=st.integers(1, 5000), batches=ops)
def test_batched_updates_match_sequential_reference(capacity, batches):
    tree = SumTree(capacity)
    ref = np.zeros(capacity)
    for raw_idx, raw_vals in batches:
        n = min(len(raw_idx), len(raw_vals))
        idx = np.array(raw_idx[:n]) % capacity
        vals = np.array(raw_vals[:n])
        tree.update(idx, vals)
        for i, v in zip(idx, vals):  # sequential semantics: the last write of an index wins
            ref[i] = v
    np.testing.assert_array_equal(tree.leaves(), ref)
    assert tree.total() == pytest.approx(ref.sum(), rel=1e-12, abs=1e-12)
    positive = ref[ref > 0]
    assert tree.min_positive() == (positive.min() if positive.size else np.inf)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.one_of(st.just(0.0), st.floats(1e-3, 50.0)), min_size=1, max_size=200),
    spread=st.sampled_from([1, 7, 60]),  # 60 * 200 leaves: deeper than the searchsorted jump level
    fractions=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30),
)
def test_find_matches_brute_force(values, spread, fractions):
    values = np.array(values)
    if values.sum() == 0:
        values[-1] = 1.0
    leaves = np.zeros(len(values) * spread)
    leaves[np.arange(len(values)) * spread] = values  # sparse: most leaves are empty
    tree = SumTree(len(leaves))
    tree.update(np.arange(len(leaves)), leaves)
    total = float(np.cumsum(leaves)[-1])
    u = np.array(fractions) * total  # includes u == total exactly (overshoot case)
    got = tree.find(u)
    assert np.all(leaves[got] > 0), "a zero-mass leaf was returned"
    csum = np.cumsum(leaves)
    for ui, gi in zip(u, got):
        want = brute_find(leaves, ui)
        if want != gi:  # only allowed at a boundary that rounding can move by one positive leaf
            assert abs(csum[min(want, gi)] - ui) <= 1e-9 * max(total, 1.0)


def test_inner_nodes_stay_consistent_through_many_batched_updates():
    rng = np.random.default_rng(3)
    tree = SumTree(3000)  # depth 12: exercises the jump and the binary descent
    ref = np.zeros(3000)
    for step in range(300):  # 300 * 64 writes > capacity: at least one exact rebuild happens
        idx = rng.integers(0, 3000, 64)  # with repeats, as sampled batches have
        vals = rng.random(64) * (rng.random(64) > 0.2) * 10.0 ** rng.integers(-3, 4, 64)
        tree.update(idx, vals)
        for i, v in zip(idx, vals):
            ref[i] = v
        if step % 50 == 0:
            positive = ref[ref > 0]
            assert tree.min_positive() == positive.min()
    np.testing.assert_array_equal(tree.leaves(), ref)
    assert tree.total() == pytest.approx(ref.sum(), rel=1e-9)
    t, p = tree._tree, tree._p
    np.testing.assert_allclose(t[1:p], t[2 : 2 * p : 2] + t[3 : 2 * p : 2], rtol=1e-9, atol=1e-9)
    idx, prob = tree.sample(20_000, rng=rng)
    assert np.all(ref[idx] > 0)
    np.testing.assert_allclose(prob, ref[idx] / ref.sum(), rtol=1e-9)


def test_overshoot_past_total_goes_to_last_positive_leaf():
    tree = SumTree(8)
    tree.update([0, 1, 2], [1.0, 2.0, 0.0])
    assert tree.find([3.0, 10.0, 2.999]).tolist() == [1, 1, 1]
    assert tree.find([0.0, 0.999, 1.0]).tolist() == [0, 0, 1]


def test_stratified_sampling_covers_segments_and_reports_probabilities():
    tree = SumTree(5)
    tree.update(np.arange(5), [1.0, 0.0, 3.0, 4.0, 2.0])
    idx, prob = tree.sample_stratified(10, rng=np.random.default_rng(0))
    # Segment j covers [j, j+1) of the cumulative mass 0..10: leaf 0 -> [0,1), leaf 2 -> [1,4), ...
    assert idx.tolist() == [0, 2, 2, 2, 3, 3, 3, 3, 4, 4]
    np.testing.assert_allclose(prob, np.array([1.0, 0, 3, 4, 2])[idx] / 10.0)


def test_iid_sampling_frequencies_are_proportional():
    leaves = np.array([1.0, 2.0, 0.0, 7.0])
    tree = SumTree(4)
    tree.update(np.arange(4), leaves)
    idx, _ = tree.sample(20_000, rng=np.random.default_rng(1))
    freq = np.bincount(idx, minlength=4) / idx.size
    np.testing.assert_allclose(freq, leaves / leaves.sum(), atol=0.015)
    assert freq[2] == 0


def test_set_all_state_dict_and_clear_round_trip():
    rng = np.random.default_rng(2)
    vals = rng.random(37) * (rng.random(37) > 0.3)
    tree = SumTree(37)
    tree.set_all(vals)
    other = SumTree(37)
    other.load_state_dict(tree.state_dict())
    u = rng.random(50) * tree.total()
    np.testing.assert_array_equal(other.find(u), tree.find(u))
    assert other.min_positive() == vals[vals > 0].min()
    other.clear()
    assert other.total() == 0.0 and other.min_positive() == np.inf
    with pytest.raises(ValueError, match="total is 0"):
        other.find([0.0])
    with pytest.raises(ValueError, match="capacity"):
        SumTree(36).load_state_dict(tree.state_dict())


@pytest.mark.parametrize(
    "call, exc, msg",
    [
        (lambda t: t.update([10], [1.0]), IndexError, r"\[10\]"),
        (lambda t: t.update([-1], [1.0]), IndexError, r"\[-1\]"),
        (lambda t: t.update([0], [-2.0]), ValueError, r"-2.0"),
        (lambda t: t.update([0], [np.nan]), ValueError, "finite"),
        (lambda t: t.update([0, 1], [1.0]), ValueError, "2 indices but 1 values"),
        (lambda t: t.update([0.5], [1.0]), TypeError, "integers"),
    ],
)
def test_bad_input_is_refused_with_the_bad_value(call, exc, msg):
    tree = SumTree(10)
    with pytest.raises(exc, match=msg):
        call(tree)
    assert tree.total() == 0.0


def test_constructor_validation():
    with pytest.raises(ValueError, match="capacity"):
        SumTree(0)
