"""stride.data.draws.uniform_ints: exactly Generator.integers(0, hi, size=n) (values, dtype, state)."""

from __future__ import annotations

import numpy as np
import pytest

from stride.data.draws import uniform_ints


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
