"""Selectors against a slow reference model, frequency tests for the random ones, error semantics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stride.data.selectors import (
    EmptySelectorError,
    FIFOSelector,
    LIFOSelector,
    PrioritizedSelector,
    SelectorKeyError,
    UniformSelector,
)

ALL = [UniformSelector, PrioritizedSelector, FIFOSelector, LIFOSelector]

# RL-Flow's PrioritizedSelector, FIFOSelector and LIFOSelector have no caller in Stride: deprecated for
# one release (test_unused_selectors_are_deprecated); they keep working until they go.
pytestmark = pytest.mark.filterwarnings("ignore:.*Selector is deprecated:DeprecationWarning")


@pytest.mark.filterwarnings("error::DeprecationWarning")
def test_unused_selectors_are_deprecated_and_the_episode_buffers_is_not():
    for cls, hint in ((PrioritizedSelector, "priority=True"), (FIFOSelector, "insertion order"),
                      (LIFOSelector, "insertion order")):
        with pytest.warns(DeprecationWarning, match=f"{cls.__name__} is deprecated.*{hint}"):
            cls()
    UniformSelector(rng=0)  # the episode buffer's sampling part: no warning (an error here)


class Reference:
    """Slow model: id -> (priority, insert time, last insert/update time)."""

    def __init__(self):
        self.items, self.clock = {}, 0

    def add(self, k, p):
        self.items[k] = (p, self.clock, self.clock)
        self.clock += 1

    def update(self, k, p):
        self.items[k] = (p, self.items[k][1], self.clock)
        self.clock += 1

    def remove(self, k):
        del self.items[k]

    def expected(self, cls):
        it = self.items
        if cls is FIFOSelector:
            return min(it, key=lambda k: it[k][1])
        if cls is LIFOSelector:
            return max(it, key=lambda k: it[k][1])
        return None


op = st.tuples(
    st.sampled_from(["add", "add", "add", "remove", "update"]),
    st.integers(-5, 25),  # small id range so that collisions and hits are common
    st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, 3.0]),  # few values: ties are common
)


@settings(max_examples=40, deadline=None)
@given(cls=st.sampled_from(ALL), ops=st.lists(op, max_size=60))
def test_selector_matches_reference_model(cls, ops):
    sel = cls(rng=0) if cls in (UniformSelector, PrioritizedSelector) else cls()
    if cls is PrioritizedSelector:
        sel = PrioritizedSelector(priority_exponent=1.0, rng=0, initial_capacity=2)  # forces growth
    ref = Reference()
    for name, k, p in ops:
        present = k in ref.items
        if name == "add":
            if present:
                with pytest.raises(SelectorKeyError, match=f"id {k} is already"):
                    sel.add(k, p)
            else:
                sel.add(k, p)
                ref.add(k, p)
        elif name == "remove":
            if present:
                sel.remove(k)
                ref.remove(k)
            else:
                with pytest.raises(SelectorKeyError, match=f"id {k} is not"):
                    sel.remove(k)
        else:
            if present:
                sel.update_priorities(k, p)
                ref.update(k, p)
            else:
                with pytest.raises(SelectorKeyError, match=f"id {k} is not"):
                    sel.update_priorities(k, p)
        assert len(sel) == len(ref.items)
        assert all(j in sel for j in ref.items)
        if not ref.items:
            with pytest.raises(EmptySelectorError, match="empty"):
                sel.sample()
            continue
        got = sel.sample()
        assert got in ref.items
        want = ref.expected(cls)
        if want is not None:
            assert got == want
        if cls is PrioritizedSelector:
            ids, prob = sel.sample_batch(16)
            weights = np.array([ref.items[i][0] for i in ids.tolist()])
            total = sum(v[0] for v in ref.items.values())
            if total > 0:
                assert np.all(weights > 0), "a zero-priority id was sampled"
                np.testing.assert_allclose(prob, weights / total)
            else:
                np.testing.assert_allclose(prob, 1.0 / len(ref.items))


def chi_square(counts: np.ndarray, probs: np.ndarray) -> float:
    expected = counts.sum() * probs
    return float(((counts - expected) ** 2 / expected).sum())


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0, 2.0])
@pytest.mark.parametrize("stratified", [False, True])
def test_prioritized_frequencies_follow_priority_power(alpha, stratified):
    priorities = np.array([0.1, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0])
    ids = np.array([1000, -3, 7, 2**40, 12, 99, 5, 6])  # arbitrary ints, not slot numbers
    sel = PrioritizedSelector(priority_exponent=alpha, rng=np.random.default_rng(123), stratified=stratified)
    sel.add_batch(ids, priorities)
    draws, probs = [], []
    for _ in range(200):
        got, prob = sel.sample_batch(64)
        draws.append(got)
        probs.append(prob)
    draws = np.concatenate(draws)
    want = priorities**alpha / (priorities**alpha).sum()
    counts = np.array([(draws == i).sum() for i in ids])
    assert counts.sum() == draws.size  # nothing outside the stored ids
    # 7 degrees of freedom: P(chi2 > 40) < 1e-5. Stratified draws are less variable still.
    assert chi_square(counts, want) < 40.0
    lookup = dict(zip(ids.tolist(), want))
    np.testing.assert_allclose(np.concatenate(probs), [lookup[i] for i in draws.tolist()])


def test_uniform_frequencies_and_swap_removal():
    sel = UniformSelector(rng=7)
    sel.add_batch(range(100, 110))
    sel.remove_batch([100, 105])  # holes filled by swap-with-last
    draws, prob = sel.sample_batch(16_000)
    assert set(draws.tolist()) == set(range(100, 110)) - {100, 105}
    np.testing.assert_allclose(prob, 1 / 8)
    counts = np.bincount(draws - 100, minlength=10)[[1, 2, 3, 4, 6, 7, 8, 9]]
    assert chi_square(counts, np.full(8, 1 / 8)) < 40.0


def test_importance_weights_are_normalised_by_the_least_likely_item():
    sel = PrioritizedSelector(priority_exponent=1.0, rng=0)
    sel.add_batch([1, 2, 3, 4], [1.0, 2.0, 4.0, 0.0])
    ids, prob = sel.sample_batch(32)
    w = sel.importance_weights(prob, beta=0.5)
    n, p_min = 4, 1.0 / 7.0
    np.testing.assert_allclose(w, (n * prob) ** -0.5 / (n * p_min) ** -0.5)
    assert w.max() <= 1.0 + 1e-12
    np.testing.assert_allclose(sel.importance_weights([1.0 / 7.0], beta=0.4), [1.0])


def test_priority_zero_is_never_sampled_even_with_exponent_zero():
    sel = PrioritizedSelector(priority_exponent=0.0, rng=0)
    sel.add_batch([1, 2, 3], [0.0, 5.0, 0.5])
    ids, prob = sel.sample_batch(500)
    assert set(ids.tolist()) == {2, 3}
    np.testing.assert_allclose(prob, 0.5)


@pytest.mark.parametrize("cls", ALL)
def test_batches_are_all_or_nothing(cls):
    sel = cls()
    sel.add_batch([1, 2, 3], [1.0, 2.0, 3.0])
    with pytest.raises(SelectorKeyError, match="id 2 is already"):
        sel.add_batch([9, 2], [1.0, 1.0])
    with pytest.raises(SelectorKeyError, match="id 8 is already"):
        sel.add_batch([8, 8], [1.0, 1.0])
    with pytest.raises(SelectorKeyError, match="id 4 is not"):
        sel.remove_batch([1, 4])
    with pytest.raises(SelectorKeyError, match="id 1 is not"):
        sel.remove_batch([1, 1])
    with pytest.raises(SelectorKeyError, match="id 5 is not"):
        sel.update_priorities_batch([1, 5], [9.0, 9.0])
    assert len(sel) == 3 and 9 not in sel and 8 not in sel and 1 in sel
    with pytest.raises(TypeError, match="integers"):
        sel.add(1.5, 1.0)
    with pytest.raises(ValueError, match="finite"):
        sel.add(10, float("nan"))
    with pytest.raises(ValueError, match="2 ids but 3 priorities"):
        sel.add_batch([10, 11], [1.0, 2.0, 3.0])
    sel.clear()
    assert len(sel) == 0
    with pytest.raises(EmptySelectorError, match=cls.__name__):
        sel.sample_batch(4)


def test_prioritized_refuses_negative_priority_and_exponent():
    with pytest.raises(ValueError, match="priority_exponent"):
        PrioritizedSelector(priority_exponent=-1.0)
    sel = PrioritizedSelector()
    with pytest.raises(ValueError, match=r"-1.0"):
        sel.add(1, -1.0)
    assert len(sel) == 0


def test_fifo_lifo_orders_survive_many_removals():
    fifo, lifo = FIFOSelector(), LIFOSelector()
    for sel in (fifo, lifo):
        sel.add_batch(range(1000))
        sel.remove_batch(range(0, 1000, 2))  # remove every even id (forces compaction)
        sel.update_priorities(1, 100.0)  # does not reorder
    assert fifo.sample() == 1 and lifo.sample() == 999
    fifo.remove(1)
    lifo.remove(999)
    assert fifo.sample() == 3 and lifo.sample() == 997


@pytest.mark.parametrize("cls", ALL)
def test_state_dict_round_trip_reproduces_samples(cls):
    kwargs = {"rng": 5} if cls in (UniformSelector, PrioritizedSelector) else {}
    sel = cls(**kwargs)
    rng = np.random.default_rng(0)
    sel.add_batch(np.arange(50) * 3, rng.random(50) + 0.1)
    sel.remove_batch([0, 27, 60])
    sel.update_priorities_batch([3, 6], [9.0, 0.2])
    state = sel.state_dict()
    assert all(isinstance(v, (np.ndarray, int, float, dict)) for v in state.values())
    other = cls(**kwargs)
    other.load_state_dict(state)
    assert len(other) == len(sel)
    np.testing.assert_array_equal(other.sample_batch(20)[0], sel.sample_batch(20)[0])
    other.remove(3)
    sel.remove(3)
    assert other.sample() == sel.sample()


def test_repeated_id_in_one_priority_update_keeps_the_last_value():
    sel = PrioritizedSelector()
    sel.add_batch([1, 2], [1.0, 1.0])
    sel.update_priorities_batch([1, 2, 1, 1], [5.0, 2.0, 0.0, 3.0])
    state = sel.state_dict()
    got = dict(zip(state["ids"].tolist(), state["priorities"].tolist()))
    assert got == {1: 3.0, 2: 2.0}


# ---- the buffers' draws (issue 14: one implementation per sampling rule) -----------------------
def test_uniform_selector_draws_are_the_buffers_draws():
    """replace=True: Generator.integers over the dense positions; replace=False: BatchLimit.uniform."""
    from stride.data.draws import BatchLimit

    for replace in (True, False):
        sel = UniformSelector(rng=3, replace=replace)
        sel.add_batch(np.arange(500) + 10_000)
        got = sel.sample_batch(64)[0]
        rng = np.random.default_rng(3)
        pos = rng.integers(0, 500, 64) if replace else BatchLimit(1024).uniform(rng, 500, 64)
        np.testing.assert_array_equal(got, pos + 10_000)


@pytest.mark.parametrize("cls", [UniformSelector, PrioritizedSelector])
def test_distinct_batches_include_each_id_with_n_times_its_probability(cls):
    from .stats_refs import check_inclusion, ref_inclusion

    prio = np.array([0.2, 0.5, 1.0, 1.0, 2.0, 3.0, 0.1, 9.0, 0.7, 1.5])
    sel = cls(rng=np.random.default_rng(1), replace=False)
    sel.add_batch(np.arange(10) * 7 - 20, prio)
    n, reps = 4, 4000
    counts = np.zeros(10)
    for _ in range(reps):
        ids, prob = sel.sample_batch(n)
        assert np.unique(ids).size == n
        counts[(ids + 20) // 7] += 1
    w = prio ** 0.6 if cls is PrioritizedSelector else np.ones(10)
    check_inclusion(counts, ref_inclusion(w, n), reps)
    with pytest.raises(ValueError, match="distinct"):
        sel.sample_batch(11)


def test_distinct_share_and_importance_weights_with_a_certain_id():
    sel = PrioritizedSelector(priority_exponent=1.0, rng=0, replace=False)
    sel.add_batch([1, 2, 3, 4], [1.0, 1.0, 1.0, 20.0])  # n = 2: id 4 is certain, tau = 3 / 1
    ids, share = sel.sample_batch(2)
    assert 4 in ids.tolist()
    lookup = dict(zip(ids.tolist(), share.tolist()))
    assert lookup[4] == pytest.approx(0.5)  # min(20, tau) / (n tau)
    w = sel.importance_weights(share, beta=1.0)
    assert w.max() == pytest.approx(1.0) and dict(zip(ids.tolist(), w.tolist()))[4] == pytest.approx(1 / 3)


def test_growing_the_capacity_does_not_change_the_draws():
    """The sampler's bound of the weights (what its draws depend on) survives a growth."""
    small, big = PrioritizedSelector(rng=9, initial_capacity=64), PrioritizedSelector(rng=9, initial_capacity=4096)
    prio = np.random.default_rng(0).random(70) + 0.5
    prio[3] = 50.0
    for s in (small, big):
        s.add_batch(np.arange(60), prio[:60])
        s.update_priorities_batch([3], [0.5])  # the bound stays at 50 ** 0.6
        s.add_batch(np.arange(60, 70), prio[60:])  # the small one grows
    np.testing.assert_array_equal(small.sample_batch(256)[0], big.sample_batch(256)[0])


@pytest.mark.parametrize("cls", ALL)
def test_removing_every_id_one_by_one_empties_the_selector(cls):
    sel = cls()
    sel.add_batch([1, 2, 3], [1.0, 2.0, 3.0])
    for k in (3, 1, 2):
        sel.remove(k)
    assert len(sel) == 0 and 2 not in sel
    with pytest.raises(EmptySelectorError):
        sel.sample()


def test_a_malformed_state_is_refused_by_type():
    sel = PrioritizedSelector(rng=0)
    sel.add_batch([1, 2], [1.0, 2.0])
    state = sel.state_dict()
    with pytest.raises(TypeError, match="number"):
        PrioritizedSelector(rng=0).load_state_dict({**state, "priority_exponent": "0.6"})
    with pytest.raises(TypeError, match="rng"):
        PrioritizedSelector(rng=0).load_state_dict({**state, "rng": [1, 2]})
    fifo = FIFOSelector()
    fifo.add(3)
    with pytest.raises(TypeError, match="integer"):
        FIFOSelector().load_state_dict({**fifo.state_dict(), "next_seq": 1.5})
