"""Matchmaking: prioritised fictitious self-play (PFSP) weights and the opponent draw.

PFSP (Vinyals et al., 2019, AlphaStar; DI-engine's ``ding/league/algorithm.py``) picks an opponent
with probability proportional to ``f(win rate of the learner against it)``:

- ``'squared'``: ``(1 - x)^2`` -- hardest opponents first (AlphaStar's main agents);
- ``'variance'``: ``x (1 - x)`` -- opponents of about equal strength (the most informative games);
- ``'linear'``: ``1 - x``.

When every weight is (about) zero -- the learner beats every opponent -- the draw is uniform, as
in DI-engine. Pure functions on arrays, tested against hand-computed numbers.
"""

from __future__ import annotations

from typing import Callable, Dict, Sequence, Union

import numpy as np
import numpy.typing as npt

WEIGHTINGS: Dict[str, Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]]] = {
    "squared": lambda x: (1.0 - x) ** 2,
    "variance": lambda x: x * (1.0 - x),
    "linear": lambda x: 1.0 - x,
}


def pfsp_weights(win_rates: Sequence[float], weighting: str = "squared") -> npt.NDArray[np.float64]:
    """The probability of drawing each opponent, given the learner's win rate against each."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"unknown PFSP weighting {weighting!r}; valid choices: {', '.join(sorted(WEIGHTINGS))}")
    x = np.asarray(win_rates, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"PFSP needs a non-empty list of win rates, got {list(win_rates)!r}")
    if np.any((x < 0.0) | (x > 1.0)):
        raise ValueError(f"win rates must lie in [0, 1], got {x.tolist()}")
    w = WEIGHTINGS[weighting](x)
    total = float(w.sum())
    if total < 1e-6:
        return np.full(x.size, 1.0 / x.size)
    return w / total


def draw_index(probs: Union[Sequence[float], npt.NDArray[np.float64]], rng: np.random.Generator) -> int:
    """An index drawn with probabilities ``probs`` (they must sum to 1)."""
    return int(rng.choice(len(probs), p=np.asarray(probs, dtype=np.float64)))
