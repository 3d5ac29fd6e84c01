"""stride.data.pps and BlockSumSampler.sample_distinct / sample_excluding: pi-ps batches on every path
(Sampford with rejection or two-level candidates, randomized systematic sampling, certainty items)
against slow references: inclusion probabilities, Sampford's closed-form law of the batch."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from stride.data.block_sampler import BlockSumSampler
from stride.data.pps import certainty_items, systematic_pps

from .stats_refs import bound, check_inclusion, chi2, ref_inclusion


@pytest.mark.parametrize("path", ["sampford", "sampford_blocks", "systematic"])
def test_distinct_sampler_paths_match_the_design(path):
    """BlockSumSampler.sample_distinct on each of its paths: inclusion n w / W (and certainty items);
    Sampford's batches follow its closed form P(s) ~ prod_{i in s} pi_i / (1 - pi_i) * sum_{i in s} (1 - pi_i)."""
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    n, reps = 3, 30000
    s = BlockSumSampler(w.size + 70)  # slots past hi stay empty
    s.set(np.arange(w.size), w)
    if path == "systematic":
        s.SAMPFORD_MAX_LOAD = 0.0
    else:
        s.SAMPFORD_MAX_LOAD, s.SAMPFORD_MAX_SHARE, s.SAMPFORD_TRIES = 1e9, 0.99, 10**9
        if path == "sampford_blocks":
            s.MAX_REJECTION_RATIO = 0.0
    rng = np.random.default_rng(2)
    subsets = {c: j for j, c in enumerate(itertools.combinations(range(w.size), n))}
    counts = np.zeros(len(subsets))
    for _ in range(reps):
        slots, leaves, tau = s.sample_distinct(n, rng, w.size)
        assert tau == np.inf and np.array_equal(leaves, w[slots])
        counts[subsets[tuple(sorted(slots.tolist()))]] += 1
    pi = ref_inclusion(w, n)
    incl = np.zeros(w.size)
    for c, j in subsets.items():
        incl[list(c)] += counts[j]
    check_inclusion(incl, pi, reps)
    if path != "systematic":
        lam = pi / (1 - pi)
        law = np.array([np.prod(lam[list(c)]) * np.sum(1 - pi[list(c)]) for c in subsets])
        law /= law.sum()
        assert chi2(counts, reps * law) < bound(len(subsets) - 1)
    # with a certainty item (weight above the total of the others / (n - 1))
    s.set(np.array([5]), np.array([40.0]))
    for _ in range(50):
        slots, leaves, tau = s.sample_distinct(n, rng, w.size)
        assert 5 in slots.tolist() and np.unique(slots).size == n
        assert tau == pytest.approx((w[:5].sum()) / (n - 1))


def test_distinct_sampler_refuses_too_few_positive_leaves():
    s = BlockSumSampler(10)
    s.set(np.arange(4), np.array([1.0, 0.0, 2.0, 3.0]))
    assert s.sample_distinct(4, np.random.default_rng(0), 10) is None
    slots, _, _ = s.sample_distinct(3, np.random.default_rng(0), 10)
    assert sorted(slots.tolist()) == [0, 2, 3]


@pytest.mark.parametrize("seed", range(6))
def test_certainty_items_and_systematic_pps_against_reference(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(3, 25))
    w = rng.random(m) ** 3 + 1e-3
    w[rng.integers(0, m, size=int(rng.integers(0, 3)))] *= 200.0
    n = int(rng.integers(1, m + 1))
    certain, tau = certainty_items(w, n)
    pi = ref_inclusion(w, n)
    assert sorted(certain.tolist()) == np.flatnonzero(pi >= 1.0).tolist()
    capped = np.minimum(w, tau)
    np.testing.assert_allclose(n * capped / capped.sum(), np.minimum(pi, 1.0) if certain.size < n else 1.0, rtol=1e-9)
    for _ in range(20):
        idx, t2 = systematic_pps(w, n, rng)
        assert t2 == tau and idx.size == n and np.unique(idx).size == n and set(certain.tolist()) <= set(idx.tolist())


def test_sample_excluding_follows_the_leaves_on_both_paths():
    w = np.array([4.0, 1.0, 0.0, 2.0, 3.0, 6.0])
    s = BlockSumSampler(10)
    s.set(np.arange(6), w)
    rng = np.random.default_rng(3)
    for excl in (np.array([0]), np.array([0, 4, 5])):  # rejection (under half the total), explicit leaves
        v = s.sample_excluding(20000, rng, 6, excl)
        q = w.copy()
        q[excl] = 0.0
        assert set(v.tolist()) <= set(np.flatnonzero(q).tolist())
        pos = np.flatnonzero(q)
        assert chi2(np.bincount(v, minlength=6)[pos].astype(float), 20000 * q[pos] / q.sum()) < bound(pos.size)
    assert s.sample_excluding(5, rng, 6, np.array([0, 1, 3, 4, 5])).size == 0
