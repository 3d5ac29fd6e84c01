"""Statistics of learning curves across seeds: step-wise values on a common grid, a percentile
bootstrap of the mean over seeds, and the interquartile mean (IQM) with a stratified bootstrap.

Agarwal et al. (2021, "Deep RL at the edge of the statistical precipice", the ``rliable`` library)
argue for interval estimates over a handful of seeds and for the IQM across tasks: robust to one
outlier run, yet less noisy than the median. The functions here compute what ``rliable``'s
``iqm`` and ``StratifiedBootstrap`` compute, as pure NumPy functions with a seedable generator, so
``stride plot`` needs no extra package and a test can check every number by hand.
"""

from __future__ import annotations

from typing import Callable, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
#: numbers: a sequence or an array
Numbers = Union[Sequence[float], npt.NDArray[np.floating]]


def step_values(xs: Numbers, ys: Numbers, grid: Numbers) -> Floats:
    """The curve ``(xs, ys)`` read at each ``grid`` point as the last value measured at or before
    it (an evaluation holds until the next one); NaN before the first measurement. ``xs`` ascend."""
    x, y, g = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64), np.asarray(grid, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"xs and ys must be 1-D of one length, not {x.shape} and {y.shape}")
    if np.any(np.diff(x) < 0):
        raise ValueError("xs must ascend")
    at = np.searchsorted(x, g, side="right") - 1
    out = np.full(g.shape, np.nan)
    seen = at >= 0
    out[seen] = y[at[seen]]
    return out


def iqm(scores: Numbers) -> float:
    """The interquartile mean: the mean of the scores left after cutting ``floor(n / 4)`` from each
    end of the sorted scores (``scipy.stats.trim_mean(scores, 0.25)``, as ``rliable`` computes it)."""
    s = np.sort(np.asarray(scores, dtype=np.float64).reshape(-1))
    if s.size == 0:
        raise ValueError("the IQM of no scores")
    cut = s.size // 4
    return float(s[cut:s.size - cut].mean())


def bootstrap_interval(samples: Sequence[Floats], statistic: Callable[[Floats], float], n_boot: int = 2000,
                       confidence: float = 0.95, seed: int = 0) -> Tuple[float, float, float]:
    """``statistic`` of the pooled ``samples`` and its percentile bootstrap interval: each round
    resamples every stratum (one array of ``samples``: e.g. one env's seeds) with replacement, apart
    from the others, and pools them, as ``rliable``'s ``StratifiedBootstrap`` does (one stratum: the
    plain bootstrap over seeds). Returns ``(point, low, high)``."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence}; valid: between 0 and 1")
    strata = [np.asarray(s, dtype=np.float64).reshape(-1) for s in samples]
    if not strata or any(s.size == 0 for s in strata):
        raise ValueError("every stratum needs at least one sample")
    rng = np.random.default_rng(seed)
    point = statistic(np.concatenate(strata))
    stats = np.empty(n_boot)
    for b in range(n_boot):
        stats[b] = statistic(np.concatenate([s[rng.integers(0, s.size, s.size)] for s in strata]))
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return point, float(low), float(high)


def mean_interval(values: Floats, n_boot: int = 2000, confidence: float = 0.95,
                  seed: int = 0) -> Tuple[Floats, Floats, Floats]:
    """Per column of ``values`` (seeds x grid points): the mean over seeds and its percentile
    bootstrap interval (seeds resampled with replacement). One seed gives a zero-width interval."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] == 0:
        raise ValueError(f"values must be seeds x points with at least one seed, not shape {v.shape}")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, v.shape[0], size=(n_boot, v.shape[0]))
    boot = v[picks].mean(axis=1)  # n_boot x points
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(boot, [tail, 100 - tail], axis=0)
    return v.mean(axis=0), low, high
