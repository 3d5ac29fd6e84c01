"""The vectorised SeedSequence -> PCG64 seeding equals NumPy's own, bit for bit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stride.utils.seed_sequence import pcg64_seed_words, pcg64_states


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=0, max_size=70))
def test_states_equal_numpy(seeds):
    states = pcg64_states(seeds)
    assert len(states) == len(seeds)
    for s, state in zip(seeds, states):
        assert state == np.random.PCG64(s).state


def test_edges_and_words():
    seeds = [0, 1, 2**31 - 1, 2**32 - 1]
    words = pcg64_seed_words(seeds)
    assert words.dtype == np.uint64 and words.shape == (4, 4)
    for s, w in zip(seeds, words):
        assert (w == np.random.SeedSequence(s).generate_state(4, np.uint64)).all()


def test_loaded_state_draws_like_a_fresh_generator():
    rng = np.random.default_rng(99)
    rng.random(7)  # consume, then load another seed's state
    rng.bit_generator.state = pcg64_states([1234])[0]
    assert (rng.random(5) == np.random.default_rng(1234).random(5)).all()


@pytest.mark.parametrize("bad", [-1, 2**32])
def test_out_of_range_refused(bad):
    with pytest.raises(ValueError, match=str(bad)):
        pcg64_seed_words([3, bad])
