"""``UseStalenessEviction``: when an item leaves ``AdvancedReplayBuffer`` before the ring overwrites it.

DI-engine's two early-eviction rules, kept per slot:

* ``max_use``: an item is evicted once it has been sampled this many times. A batch never holds an
  item more often than its remaining uses (:meth:`~UseStalenessEviction.remaining`, the cap the
  buffer's :class:`~stride.data.draws.BatchLimit` enforces, counting the batch itself); a copy
  counts as a use, and the item goes once the batch that used it up is built;
* ``max_staleness``: an item is evicted when ``cur_learner_iter - collect_iter > max_staleness`` at
  sample time (counted in learner iterations, not wall-clock time).

With a limit at ``inf`` its bookkeeping is skipped on the hot path: use counts exist only to evict,
and a lower bound of the live items' ``collect_iter`` answers "nothing is stale" in O(1).
"""

from __future__ import annotations

import math

import numpy as np

_NO_ITER = int(np.iinfo(np.int64).max)


class UseStalenessEviction:
    """Use counts and collect iterations of ``capacity`` slots, and the slots the limits evict."""

    def __init__(self, capacity: int, max_use: float, max_staleness: float) -> None:
        self.max_use = float(max_use)
        self.max_staleness = float(max_staleness)
        self.use_on = self.max_use != math.inf  # use counts are kept only when they can evict
        self._uses = math.ceil(self.max_use) if self.use_on else 0  # uses an item gets: k < max_use for k = 0, 1, ...
        self.stale_on = self.max_staleness != math.inf
        self.use = np.zeros(capacity, dtype=np.int64)
        self.collect_iter = np.zeros(capacity, dtype=np.int64)
        self.min_collect_iter = _NO_ITER  # lower bound over live items (skips staleness scans)

    def written_one(self, slot: int, collect_iter: int) -> None:
        self.use[slot] = 0
        self.collect_iter[slot] = collect_iter
        if collect_iter < self.min_collect_iter:
            self.min_collect_iter = collect_iter

    def written(self, slots: np.ndarray, collect_iter: np.ndarray) -> None:
        self.use[slots] = 0
        self.collect_iter[slots] = collect_iter
        self.min_collect_iter = min(self.min_collect_iter, int(collect_iter.min()))

    def stale(self, cur_learner_iter: int, live: np.ndarray) -> np.ndarray:
        """Live slots too old at ``cur_learner_iter`` (to evict now); refreshes the lower bound."""
        if cur_learner_iter - self.min_collect_iter <= self.max_staleness:
            return np.empty(0, dtype=np.int64)
        stale = np.flatnonzero(live & (cur_learner_iter - self.collect_iter > self.max_staleness))
        keep = live.copy()
        keep[stale] = False
        live_ci = self.collect_iter[keep]
        self.min_collect_iter = int(live_ci.min()) if live_ci.size else _NO_ITER
        return stale

    def remaining(self, slots: np.ndarray) -> np.ndarray:
        """Uses left to each slot's item (>= 1 for a live one): at most this many copies per batch."""
        return self._uses - self.use.take(slots)

    def count_use(self, slots: np.ndarray) -> None:
        """Register one use per drawn slot (repeats count)."""
        np.add.at(self.use, slots, 1)

    def used_up(self, slots: np.ndarray) -> np.ndarray:
        """Distinct drawn slots that reached ``max_use`` (to evict after the batch is built)."""
        return np.unique(slots[self.use[slots] >= self.max_use])

    def reset(self) -> None:
        self.use[:] = 0
        self.collect_iter[:] = 0
        self.min_collect_iter = _NO_ITER

    def restore(self, slots: np.ndarray, use: np.ndarray, collect_iter: np.ndarray) -> None:
        self.use[slots] = use
        self.collect_iter[slots] = collect_iter
        self.min_collect_iter = int(np.min(collect_iter)) if len(collect_iter) else _NO_ITER
