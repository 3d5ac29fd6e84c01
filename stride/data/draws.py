"""``uniform_ints(rng, hi, n)``: ``rng.integers(0, hi, size=n)`` -- the same draws, ~1 us cheaper.

Replay sampling draws its slots (uniform) and its candidates (prioritized rejection sampling) with
``Generator.integers``, whose fixed cost (~4.4 us) is ~10% of a sample of 64. About 1.2 us of it
is ``np.prod(size)``, which NumPy's bounded-integer code calls on the size: for a plain ``int``
that goes through ``getattr(size, "prod")``, an ``AttributeError`` and a ufunc reduction. A size
that is an ``int`` with its own trivial ``prod`` answers at once. Nothing else changes: the same
bounded-integer routine fills the same number of values from the same bit stream, so values,
dtype and generator state are identical (``tests/data/test_draws.py``; the recorded sampling
draws in ``test_sampling_draws.py`` pin the buffers' sequences too). Should NumPy stop calling
``prod`` there, the size is still an ``int`` and only the saving goes.
"""

from __future__ import annotations

import numpy as np


class _Size(int):
    """An ``int`` whose ``prod()`` is itself (what ``np.prod`` of a scalar size returns)."""

    __slots__ = ()

    def prod(self, axis=None, dtype=None, out=None, **kwargs) -> int:  # noqa: ARG002 (NumPy's signature)
        return int(self)


def uniform_ints(rng: np.random.Generator, hi: int, n: int) -> np.ndarray:
    """``n`` int64 values uniform over ``[0, hi)``: exactly ``rng.integers(0, hi, size=n)``."""
    return rng.integers(0, hi, size=_Size(n))
