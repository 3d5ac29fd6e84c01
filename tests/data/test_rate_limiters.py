"""Rate limiters: Reverb's counters and validation, non-blocking refusals, no deadlock in a serial loop."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stride.data.rate_limiters import MinSize, RateLimitedError, SampleToInsertRatio


def test_sample_to_insert_ratio_hand_computed():
    lim = SampleToInsertRatio(samples_per_insert=2.0, min_size_to_sample=3, error_buffer=4.0)
    assert (lim.min_diff, lim.max_diff) == (2.0, 10.0)  # offset 6 +- 4
    assert not lim.can_sample(1)  # stage 1: empty table
    lim.insert(3)  # free: the table is not warm yet (size + n <= min_size)
    assert lim.error == 6.0
    assert lim.can_sample(4) and not lim.can_sample(5) and lim.max_samples() == 4
    assert lim.can_insert(2) and not lim.can_insert(3) and lim.max_inserts() == 2
    lim.sample(4)
    assert lim.error == 2.0 and not lim.can_sample(1)
    with pytest.raises(RateLimitedError, match="below min_diff"):
        lim.sample(1)
    assert lim.samples == 4  # the refused call registered nothing
    lim.insert(4)  # error 2 + 8 = 10 == max_diff
    with pytest.raises(RateLimitedError, match="exceed max_diff"):
        lim.insert(1)
    assert lim.inserts == 7
    lim.delete(5)  # size 2 < 3: back in stage 1, samples refused, inserts free again
    assert lim.size == 2 and not lim.can_sample(1)
    with pytest.raises(RateLimitedError, match="min_size_to_sample=3"):
        lim.sample(1)
    assert lim.can_insert(1) and lim.max_inserts() == 1


def test_min_size_blocks_samples_until_warm_then_allows_everything():
    lim = MinSize(5)
    lim.insert(4)
    assert not lim.can_sample(1) and lim.max_samples() == 0
    lim.insert(1)
    assert lim.can_sample(10**9) and lim.max_samples() == math.inf and lim.max_inserts() == math.inf
    lim.sample(10**6)
    assert lim.can_insert(10**6)


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(samples_per_insert=0.0, min_size_to_sample=1, error_buffer=10), "samples_per_insert"),
        (dict(samples_per_insert=-1.0, min_size_to_sample=1, error_buffer=10), "samples_per_insert"),
        (dict(samples_per_insert=1.0, min_size_to_sample=0, error_buffer=10), "min_size_to_sample"),
        (dict(samples_per_insert=4.0, min_size_to_sample=1, error_buffer=3.9), "narrower"),
        (dict(samples_per_insert=0.5, min_size_to_sample=1, error_buffer=0.9), "narrower"),
        (dict(samples_per_insert=1.0, min_size_to_sample=10, error_buffer=(11.0, 20.0)), "above"),
        (dict(samples_per_insert=1.0, min_size_to_sample=10, error_buffer="big"), "error_buffer"),
    ],
)
def test_sample_to_insert_ratio_validation(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        SampleToInsertRatio(**kwargs)


def test_max_diff_below_offset_warns_but_does_not_deadlock():
    with pytest.warns(UserWarning, match="below"):
        lim = SampleToInsertRatio(1.0, 10, error_buffer=(0.0, 5.0))
    lim.insert(10)
    assert not lim.can_insert(1) and lim.can_sample(5)


def test_min_size_validation_and_bad_counts():
    with pytest.raises(ValueError, match="positive integer"):
        MinSize(0)
    lim = MinSize(1)
    with pytest.raises(ValueError, match="non-negative integer"):
        lim.can_insert(-1)
    with pytest.raises(ValueError, match="cannot delete 1"):
        lim.delete(1)


@settings(max_examples=60, deadline=None)
@given(
    spi=st.sampled_from([0.25, 0.5, 1.0, 2.0, 8.0]),
    min_size=st.integers(1, 50),
    slack=st.floats(1.0, 5.0),
    batch=st.integers(1, 8),
    steps=st.integers(50, 400),
)
def test_serial_loop_never_deadlocks_and_keeps_the_ratio(spi, min_size, slack, batch, steps):
    buffer = slack * max(1.0, spi) * batch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lim = SampleToInsertRatio(spi, min_size, buffer)
    for _ in range(steps):
        # A serial pipeline: collect one item when allowed, otherwise train on what is allowed.
        if lim.can_insert(1):
            lim.insert(1)
            if lim.size > min_size:
                assert lim.error <= lim.max_diff
        else:
            n = int(min(batch, lim.max_samples()))
            assert n >= 1, f"deadlock: no insert and no sample possible ({lim.state_dict()})"
            assert lim.can_sample(n) and not lim.can_sample(int(lim.max_samples()) + 1)
            lim.sample(n)
            assert lim.error >= lim.min_diff
    if lim.size >= min_size:
        offset = spi * min_size
        assert abs(lim.error - offset) <= buffer + spi * batch


def test_state_dict_round_trip():
    lim = SampleToInsertRatio(1.0, 2, 5.0)
    lim.insert(4)
    lim.sample(3)
    lim.delete(1)
    other = SampleToInsertRatio(1.0, 2, 5.0)
    other.load_state_dict(lim.state_dict())
    assert (other.inserts, other.samples, other.deletes) == (4, 3, 1)
    assert other.max_samples() == lim.max_samples() and other.max_inserts() == lim.max_inserts()
    with pytest.raises(ValueError, match="samples_per_insert"):
        SampleToInsertRatio(2.0, 2, 5.0).load_state_dict(lim.state_dict())
    other.reset()
    assert other.size == 0 and not other.can_sample(1)


def test_reset_can_count_items_already_in_the_table():
    lim = MinSize(3)
    lim.insert(5)
    lim.sample(2)
    lim.reset(4)
    assert (lim.inserts, lim.samples, lim.deletes, lim.size) == (4, 0, 0, 4) and lim.can_sample(1)
    with pytest.raises(ValueError):
        lim.reset(-1)


def test_a_forced_insert_registers_items_that_exist_and_the_limit_then_refuses_more():
    lim = SampleToInsertRatio(1.0, 2, (2.0, 6.0))
    lim.insert(6)  # error 6 == max_diff
    assert not lim.can_insert(1)
    lim.insert(3, force=True)  # an asynchronous producer's batch, larger than it was let go for
    assert lim.inserts == 9 and lim.error == 9.0 and not lim.can_insert(1) and lim.max_inserts() == 0
    lim.sample(4)  # samples bring the error back into the window
    assert lim.can_insert(1)
    with pytest.raises(ValueError):
        lim.insert(-1, force=True)
