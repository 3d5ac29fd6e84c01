"""PFSP weights against hand-computed numbers."""

from __future__ import annotations

import numpy as np
import pytest

from stride.league import pfsp_weights
from stride.league.matchmaking import draw_index

RATES = [0.2, 0.5, 0.9]


@pytest.mark.parametrize("weighting, expected", [
    # (1-x)^2 = 0.64, 0.25, 0.01 (sum 0.9)
    ("squared", [0.64 / 0.9, 0.25 / 0.9, 0.01 / 0.9]),
    # x(1-x) = 0.16, 0.25, 0.09 (sum 0.5)
    ("variance", [0.32, 0.5, 0.18]),
    # 1-x = 0.8, 0.5, 0.1 (sum 1.4)
    ("linear", [0.8 / 1.4, 0.5 / 1.4, 0.1 / 1.4]),
])
def test_pfsp_weights_hand_computed(weighting, expected):
    np.testing.assert_allclose(pfsp_weights(RATES, weighting), expected, rtol=1e-12)


def test_pfsp_all_beaten_is_uniform():
    np.testing.assert_allclose(pfsp_weights([1.0, 1.0, 1.0, 1.0], "squared"), [0.25] * 4)
    # variance is 0 at both ends: all won or all lost -> uniform too
    np.testing.assert_allclose(pfsp_weights([0.0, 1.0], "variance"), [0.5, 0.5])


def test_pfsp_bad_input():
    with pytest.raises(ValueError, match="unknown PFSP weighting 'cubic'; valid choices: linear, squared, variance"):
        pfsp_weights(RATES, "cubic")
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        pfsp_weights([1.5], "linear")
    with pytest.raises(ValueError, match="non-empty"):
        pfsp_weights([], "linear")


def test_draw_index_follows_probabilities():
    rng = np.random.default_rng(0)
    counts = np.bincount([draw_index([0.1, 0.0, 0.9], rng) for _ in range(5000)], minlength=3)
    assert counts[1] == 0
    assert 0.07 < counts[0] / 5000 < 0.13
