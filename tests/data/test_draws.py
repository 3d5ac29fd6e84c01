"""stride.data.draws: uniform_ints is exactly Generator.integers(0, hi, size=n) (values, dtype, state);
uniform_index, uniform_excluding, occurrence_rank against references; BatchLimit's distinct check,
distinct uniform batches and capped batches (the law of the stream of draws, computed exactly)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from stride.data.draws import BatchLimit, occurrence_rank, uniform_excluding, uniform_index, uniform_ints

from .stats_refs import bound, capped_stream_law, chi2


@pytest.mark.parametrize("hi", [1, 2, 7, 40_000, 100_000, 2**32 - 1, 2**32, 2**32 + 1, 2**40])
def test_same_values_dtype_and_state_as_integers(hi):
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    for n in [0, 1, 2, 3, 63, 64, 65, 157, 1000]:
        if n % 2:
            a.random(3), b.random(3)  # doubles in between (the prioritized sampler's acceptance draws)
        x, y = a.integers(0, hi, size=n), uniform_ints(b, hi, n)
        assert x.dtype == y.dtype == np.int64 and x.shape == y.shape == (n,)
        assert np.array_equal(x, y)
    assert a.bit_generator.state == b.bit_generator.state  # (incl. the buffered 32-bit half)


def test_size_is_a_plain_int_for_everything_else():
    assert uniform_ints(np.random.default_rng(0), 5, 4).tolist() == np.random.default_rng(0).integers(0, 5, 4).tolist()
    with pytest.raises(ValueError):
        uniform_ints(np.random.default_rng(0), 0, 4)  # high <= low, as integers() says


@pytest.mark.parametrize("weighted", [False, True])
def test_capped_draws_follow_the_stream_of_draws(weighted):
    """BatchLimit.capped = the first n accepted i.i.d. draws, a draw of an exhausted slot rejected
    (multiset law computed exactly); the batch keeps its draws up to the first copy too many."""
    p = np.array([0.6, 0.3, 0.1]) if weighted else np.full(3, 1 / 3)
    caps = np.array([1, 2, 3])
    n, reps = 4, 30000
    rng = np.random.default_rng(9)
    lim = BatchLimit(3)

    def draw(k, exhausted):
        q = p.copy()
        q[exhausted] = 0.0
        return rng.choice(3, size=k, p=q / q.sum())

    law = capped_stream_law(p, caps, n)
    keys = {key: j for j, key in enumerate(law)}
    counts = np.zeros(len(law))
    for _ in range(reps):
        first = rng.choice(3, size=n, p=p)
        out = lim.capped(first, draw, lambda s: caps[s])
        c = np.bincount(out, minlength=3)
        assert (c <= caps).all() and out.size == n
        rank = occurrence_rank(first)
        ok = np.flatnonzero(rank >= caps[first])
        stop = int(ok[0]) if ok.size else n
        assert out[:stop].tolist() == first[:stop].tolist()
        counts[keys[tuple(c.tolist())]] += 1
    assert chi2(counts, reps * np.array(list(law.values()))) < bound(len(law) - 1)
    assert lim.capped(np.array([0, 0]), lambda k, e: np.empty(0, np.int64), lambda s: caps[s]) is None


def test_batch_limit_distinct_and_uniform_small_cases():
    lim = BatchLimit(50)
    assert lim.distinct(np.array([3, 7, 49]))
    assert not lim.distinct(np.array([3, 7, 3]))
    assert lim.distinct(np.array([7, 3]))  # stale stamps of earlier calls do not matter
    rng = np.random.default_rng(0)
    for hi, n in [(50, 50), (50, 12), (50, 13), (20, 1), (4, 0)]:
        s = lim.uniform(rng, hi, n)
        assert s.size == n and np.unique(s).size == n and (s < hi).all() and s.dtype == np.int64
    live = np.array([2, 5, 11, 17, 30, 31, 44, 45, 46, 47])
    s = lim.uniform(rng, live.size, 2, live)
    assert set(s.tolist()) <= set(live.tolist()) and np.unique(s).size == 2


def test_occurrence_rank_and_uniform_helpers():
    rng = np.random.default_rng(1)
    for _ in range(20):
        x = rng.integers(0, 6, size=int(rng.integers(0, 30)))
        seen = Counter()
        ref = []
        for v in x.tolist():
            ref.append(seen[v])
            seen[v] += 1
        assert occurrence_rank(x).tolist() == ref
    u = uniform_index(rng, 7, 70000)
    assert u.dtype == np.int64 and u.min() == 0 and u.max() == 6
    assert chi2(np.bincount(u, minlength=7).astype(float), np.full(7, 10000.0)) < bound(6)
    excl = np.array([1, 4])
    for hi, k in [(10, 5000), (3, 3000)]:  # rejection; explicit rest (more than half excluded)
        e = excl[excl < hi]
        v = uniform_excluding(rng, k, hi, e if hi > 3 else np.array([0, 1]))
        rest = sorted(set(range(hi)) - set((e if hi > 3 else np.array([0, 1])).tolist()))
        assert v.size == k and set(v.tolist()) <= set(rest)
        assert chi2(np.bincount(v, minlength=hi)[rest].astype(float), np.full(len(rest), k / len(rest))) < bound(len(rest))
    assert uniform_excluding(rng, 3, 2, np.array([0, 1])).size == 0
