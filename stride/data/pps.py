"""Sampling ``n`` distinct items with inclusion probability proportional to size (pi-ps), on explicit weights.

A without-replacement batch of prioritized replay must include item ``i`` with probability
``pi_i = n w_i / sum_j w_j`` (``w = p^alpha``): then an item appears in a batch on average as
often as with-replacement PER would draw it, and the importance-sampling weights ``1 / (N pi_i / n)``
keep the batch loss unbiased. When ``n w_i`` exceeds the total, the item is included with certainty
and the rest of the batch is drawn the same way from the others (:func:`certainty_items`).

:func:`systematic_pps` is randomized systematic sampling (Goodman & Kish 1950; Hartley & Rao 1962):
the items in a random order, laid end to end on ``[0, W)``, and ``n`` points ``(u + k) W / n``
with one uniform ``u``. Item ``i`` is hit exactly with probability ``n w_i / W`` (its interval's
length over the spacing), at most once since no interval is longer than the spacing. The random
order gives (almost) every pair a positive chance to be drawn together -- systematic sampling in
slot order would never put two neighbouring small items in one batch -- and with equal weights it
is simple random sampling. Cost O(N) (a permutation, a running sum): the
:class:`~stride.data.block_sampler.BlockSumSampler` uses it for small buffers and for certainty
items, and Sampford's method (O(n) per attempt) otherwise.
"""

from __future__ import annotations

import math
from typing import Tuple

import numpy as np

#: relative margin: an item whose share ``n w / W`` is within this of 1 is taken with certainty
#: (keeps every other interval shorter than the spacing despite the rounding of the running sum).
EPS = 1e-9


def certainty_items(w: np.ndarray, n: int) -> Tuple[np.ndarray, float]:
    """Indices of the items a pi-ps sample of ``n`` from positive weights ``w`` (``len(w) >= n``)
    takes with certainty, and the cap ``tau``: every item is included with probability
    ``n min(w_i, tau) / sum_j min(w_j, tau)`` (``tau = inf``: no certainty item).

    The certain items are the ``c`` largest, ``c`` the smallest count for which the next largest
    satisfies ``(n - c) w < W - (sum of the c largest)``; ``tau = (W - that sum) / (n - c)``."""
    total = float(w.sum())
    if n * float(w.max()) < total * (1.0 - EPS):
        return np.empty(0, dtype=np.int64), math.inf
    order = np.argsort(-w, kind="stable")[:n]
    top = w[order]
    before = np.concatenate([[0.0], np.cumsum(top)[:-1]])
    rest = total - before  # weight left once the items before this one are certain
    free = (n - np.arange(n)) * top < rest * (1.0 - EPS)
    c = int(np.argmax(free)) if free.any() else n
    tau = float(rest[c] / (n - c)) if c < n else float(top[-1])
    return order[:c].astype(np.int64), tau


def systematic_pps(w: np.ndarray, n: int, rng: np.random.Generator) -> Tuple[np.ndarray, float]:
    """``n`` distinct indices into positive weights ``w`` (``len(w) >= n``), item ``i`` included with
    probability ``n min(w_i, tau) / sum_j min(w_j, tau)``; returns ``(indices, tau)`` (see
    :func:`certainty_items`). Certain items come first, then the systematic picks in random order."""
    m = w.size
    certain, tau = certainty_items(w, n)
    k = n - certain.size
    if not k:
        return certain, tau
    if certain.size:
        mask = np.ones(m, dtype=bool)
        mask[certain] = False
        rest = np.flatnonzero(mask)
    else:
        rest = np.arange(m)
    perm = rest.take(rng.permutation(rest.size))
    cum = np.cumsum(w.take(perm))
    start = rng.random()
    while True:
        points = (start + np.arange(k)) * (float(cum[-1]) / k)
        picked = perm.take(np.minimum(cum.searchsorted(points, side="right"), perm.size - 1))
        if np.unique(picked).size == k:  # (guaranteed but for rounding: see EPS)
            break
        start = rng.random()
    return (np.concatenate([certain, picked]) if certain.size else picked), tau
