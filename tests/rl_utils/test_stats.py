"""Learning-curve statistics against hand-computed numbers and a slow reference written here."""

import numpy as np
import pytest

from stride.rl_utils.stats import bootstrap_interval, iqm, mean_interval, step_values


def test_step_values_hold_the_last_measurement_and_are_nan_before_the_first():
    out = step_values([10, 20, 40], [1.0, 2.0, 3.0], [0, 10, 15, 20, 39, 40, 100])
    assert np.isnan(out[0])
    assert out[1:].tolist() == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]


def test_step_values_refuse_unsorted_or_ragged_input():
    with pytest.raises(ValueError, match="ascend"):
        step_values([2, 1], [0, 0], [1])
    with pytest.raises(ValueError, match="one length"):
        step_values([1, 2], [0], [1])


def test_iqm_cuts_a_quarter_from_each_end():
    assert iqm([1, 2, 3, 4, 5, 6, 7, 100]) == pytest.approx((3 + 4 + 5 + 6) / 4)  # 8 scores: 2 cut each end
    assert iqm([5, 1, 9]) == pytest.approx(5.0)  # 3 scores: none cut (floor(3/4) = 0) -> the mean
    assert iqm([7.0]) == 7.0
    with pytest.raises(ValueError):
        iqm([])


def _slow_bootstrap(strata, statistic, n_boot, seed):
    """The stratified bootstrap written out loop by loop, drawing in the same order."""
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(n_boot):
        pooled = []
        for s in strata:
            idx = rng.integers(0, len(s), len(s))
            pooled.extend(s[i] for i in idx)
        stats.append(statistic(np.array(pooled, dtype=float)))
    return np.percentile(stats, [2.5, 97.5])


def test_stratified_bootstrap_equals_the_slow_reference_and_brackets_the_point():
    strata = [np.array([0.1, 0.5, 0.9]), np.array([0.2, 0.3]), np.array([1.0, 0.0, 0.4, 0.6])]
    point, low, high = bootstrap_interval(strata, iqm, n_boot=500, seed=3)
    assert point == pytest.approx(iqm(np.concatenate(strata)))
    ref_low, ref_high = _slow_bootstrap(strata, iqm, 500, 3)
    assert (low, high) == pytest.approx((ref_low, ref_high))
    assert low <= point <= high


def test_identical_seeds_give_a_zero_width_interval_and_one_seed_too():
    mean, low, high = mean_interval(np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]))
    assert mean.tolist() == low.tolist() == high.tolist() == [1.0, 2.0]
    mean, low, high = mean_interval(np.array([[3.0, 4.0]]))
    assert mean.tolist() == low.tolist() == high.tolist() == [3.0, 4.0]


def test_mean_interval_contains_the_mean_and_lies_within_the_seeds():
    values = np.array([[0.0, 10.0], [4.0, 10.0], [8.0, 40.0]])
    mean, low, high = mean_interval(values, n_boot=1000, seed=1)
    assert mean.tolist() == [4.0, 20.0]
    assert np.all(low <= mean) and np.all(mean <= high)
    assert np.all(low >= values.min(axis=0)) and np.all(high <= values.max(axis=0))
