"""``SlotSelector``: what :class:`~.advanced.AdvancedReplayBuffer` samples -- live slots of its ring.

RL-Flow composes a buffer as storage + selector + rate limiter; this is the advanced buffer's
selector. It draws with the parts the public selectors draw with (:mod:`stride.data.selectors`):
proportional batches through :class:`~stride.data.priority.PriorityTable` (its
:class:`~stride.data.block_sampler.BlockSumSampler`), as :class:`~stride.data.selectors.PrioritizedSelector`
does, and uniform ones through :meth:`~stride.data.draws.BatchLimit.draw`, as
:class:`~stride.data.selectors.UniformSelector` does; ``replace=True`` batches under ``max_use`` go
through :meth:`~stride.data.draws.BatchLimit.capped` (no item more often than its remaining uses).

It works in the ring's slot space, not in the public selectors' dense positions: an item evicted
early (``max_use``, staleness, a frame storage's drop) leaves a hole that the ring refills when it
comes round, where a dense selector would move its last id into the hole (swap-with-last) and so
change which item a given random number picks -- and the buffer's draws are pinned
(``tests/data/test_sampling_draws.py``: resumed and re-run experiments sample exactly what they did).
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import numpy.typing as npt

from ..draws import BatchLimit, uniform_excluding
from ..priority import PriorityTable
from .eviction import UseStalenessEviction

Slots = npt.NDArray[np.int64]
Drawn = Tuple[Slots, Optional[npt.NDArray[np.float32]]]


class SlotSelector:
    """Chooses a batch of live slots: proportional to priority (``table`` prioritized) or uniform.

    ``live`` is the buffer's per-slot mask (the same array, read here); the buffer calls
    :meth:`live_changed` whenever it changes it, so the live slots are listed again only when needed."""

    def __init__(self, table: PriorityTable, limit: BatchLimit, evictor: UseStalenessEviction,
                 live: npt.NDArray[np.bool_], rng: np.random.Generator, replace: bool) -> None:
        self.table = table
        self.rng = rng
        self.replace = bool(replace)
        self._limit = limit  # distinct batches / remaining max_use within a batch (one scratch array)
        self._evictor = evictor
        self._live = live
        self._live_cache: Optional[Slots] = None  # live slots for uniform sampling with holes
        self._n_live = 0  # (of the draw in progress)
        self._span = 0

    def live_changed(self) -> None:
        """The buffer wrote or evicted items: the list of live slots is stale."""
        self._live_cache = None

    def draw(self, size: int, n_live: int, span: int, sample_calls: int) -> Optional[Drawn]:
        """``size`` slots among the ``n_live`` live ones of ``span`` ring slots, and their IS weights
        (prioritized with ``priority_IS_weight``, else None); None when a prioritized batch cannot be
        filled (fewer than ``size`` items of positive priority)."""
        self._n_live, self._span = n_live, span
        if self.table.sampler is not None:
            capped = self._cap_weighted if self.replace and self._evictor.use_on else None
            return self.table.sample(size, self.rng, span, sample_calls, self.replace, capped)
        return self._draw_uniform(size), None

    def _draw_uniform(self, size: int) -> Slots:
        """Uniform live slots (:meth:`~stride.data.draws.BatchLimit.draw`); with replacement, no slot
        more often than its remaining uses (a live item has a use left, so distinct batches need no check)."""
        if self._n_live != self._span:  # holes (else slots 0..span-1 are all live)
            slots = self._limit.draw(self.rng, self._n_live, size, self.replace, self._live_slots())
        else:
            slots = self._limit.draw(self.rng, self._span, size, self.replace)
        if self.replace and self._evictor.use_on:
            capped = self._limit.capped(slots, self._uniform_excluding, self._evictor.remaining)
            assert capped is not None  # (the live items' remaining uses always fill a batch of live items)
            slots = capped
        return slots

    def _live_slots(self) -> Slots:
        if self._live_cache is None:
            self._live_cache = np.flatnonzero(self._live)
        return self._live_cache

    def _uniform_excluding(self, k: int, exhausted: Slots) -> Slots:
        """``k`` i.i.d. live slots, uniform, ``exhausted`` ones left out (:class:`BatchLimit`'s further draws)."""
        if self._n_live == self._span:
            return uniform_excluding(self.rng, k, self._n_live, exhausted)
        live = self._live_slots()
        return uniform_excluding(self.rng, k, live.size, exhausted, live)

    def _cap_weighted(self, slots: Slots) -> Optional[Slots]:
        """I.i.d. prioritized draws with no item more often than its remaining uses."""
        return self._limit.capped(slots, self._weighted_excluding, self._evictor.remaining)

    def _weighted_excluding(self, k: int, exhausted: Slots) -> Slots:
        """``k`` i.i.d. slots proportional to their priority weight, ``exhausted`` ones left out."""
        return self.table.draw_excluding(k, self.rng, self._span, exhausted)
