"""``PriorityTable``: proportional prioritization (PER) over slots, the one implementation of its rules.

``AdvancedReplayBuffer`` (slots of its ring) and :class:`~stride.data.selectors.PrioritizedSelector`
(dense positions of its ids) both sample through it. Per slot it keeps the priority ``p`` the
learner sent (or the one an item was pushed with); with ``priority=True`` it also keeps the
sampling weights ``p ** alpha`` in a
:class:`~stride.data.block_sampler.BlockSumSampler`, so ``P(i) = p_i^alpha / sum_j p_j^alpha``.

* New items get the current maximum priority (PER); priorities are raised to ``min_priority``
  (0 would never be sampled again); NaN / inf is refused even for an entry that is then ignored.
  With ``min_priority=0`` (the selector) a priority of 0 weighs 0 whatever ``alpha`` (never sampled).
* ``update`` ignores entries whose slot no longer holds the sampled id (overwritten or evicted
  since it was sampled; DI-engine checks this only on some iterations).
* Batches: with ``replace=True`` ``n`` i.i.d. draws with ``P(i) = w_i / W`` (``w = p^alpha``,
  ``W = sum_j w_j``), as PER; by default (``replace=False``) ``n`` distinct items, item ``i``
  included with probability ``pi_i = n w_i / W`` -- the same expected number of appearances per
  batch -- or with certainty when that exceeds 1 (the rest drawn alike from the others: then
  ``pi_i = n min(w_i, tau) / sum_j min(w_j, tau)``), by
  :meth:`~stride.data.block_sampler.BlockSumSampler.sample_distinct` (Sampford's method, or
  systematic sampling on small buffers).
* IS weights: ``IS_i = (N q_i)^-beta / max_j (N q_j)^-beta`` with ``q_i = pi_i / n`` the item's
  share of the batch (``P(i)`` with replacement), the max over every stored item (the least likely
  one): ``(w_i / w_min)^-beta <= 1``, with ``w_i`` capped at ``tau`` when some item is certain
  (``min(w_i, tau) / min(w_min, tau)``). ``1 / q_i`` is the Horvitz-Thompson weight of the design,
  so at ``beta = 1`` the IS-weighted batch mean estimates the buffer's mean without bias in both
  modes (up to the constant normalisation by the max). ``beta`` is annealed linearly to 1 over
  ``anneal_step`` sample calls.

Why it is fast: one sample + update of 64 is ~25 NumPy calls in all -- the sampler hands back the
accepted leaves with the slots (no second gather for IS), ``update`` finds the batch's smallest and
largest priority with one reduction each (finiteness, clamping, the new maximum, and the hints it
passes to the sampler: ``max(p^alpha) = max(p)^alpha``), checks that every id is still in place
with one comparison of bytes, and the smallest positive leaf is cached. What is left is NumPy's
per-call cost (~0.3-1 us a call) and the block sums (one ``take`` of 64 rows + one row reduction).
"""

from __future__ import annotations

import math
from typing import Callable, Dict, Mapping, Optional, Tuple

import numpy as np
import numpy.typing as npt

from .block_sampler import BlockSumSampler
from .draws import BatchLimit

_INF = math.inf
Slots = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
#: ``limit(slots)``: the batch with copies past a per-slot cap replaced, or None if it cannot be filled.
Limit = Callable[[Slots], Optional[Slots]]


class PriorityTable:
    """Priorities of ``capacity`` slots; proportional sampling and IS weights when ``prioritized``."""

    def __init__(self, capacity: int, prioritized: bool, alpha: float, beta: float, anneal_step: int,
                 min_priority: float, is_weight: bool, limit: Optional[BatchLimit] = None) -> None:
        self.capacity = int(capacity)
        self.alpha = float(alpha)
        self.beta0 = float(beta)
        self.anneal_step = int(anneal_step)
        self.min_priority = float(min_priority)
        self.is_weight = bool(prioritized and is_weight)
        self.prio = np.zeros(self.capacity)
        self.sampler: Optional[BlockSumSampler] = BlockSumSampler(self.capacity, limit) if prioritized else None
        self.max_priority = 1.0

    def weights(self, prio: Floats) -> Floats:
        """Sampling weights ``prio ** alpha`` (0 stays 0 when ``min_priority`` is 0)."""
        if self.min_priority > 0.0:
            return np.power(prio, self.alpha)
        return np.where(prio > 0.0, np.power(prio, self.alpha), 0.0)

    def beta(self, sample_calls: int) -> float:
        """The IS exponent after ``sample_calls`` successful sample calls."""
        if self.anneal_step <= 0:
            return self.beta0
        return min(1.0, self.beta0 + (1.0 - self.beta0) * sample_calls / self.anneal_step)

    # ---- writes from the buffer ----------------------------------------------------------------
    def check(self, prio: object) -> Floats:
        """Priorities given with pushed items: float64, finite, at least ``min_priority``."""
        prio = np.asarray(prio, dtype=np.float64).reshape(-1)
        if prio.size and not np.isfinite(prio).all():
            raise ValueError(f"priorities must be finite, got {prio[~np.isfinite(prio)][:5].tolist()}")
        out: Floats = np.maximum(prio, self.min_priority)
        return out

    def write_one(self, slot: int, prio: Optional[float]) -> None:
        """A new item at ``slot``: ``prio`` (from :meth:`check`) or the current maximum."""
        if prio is None:
            prio = self.max_priority
        elif prio > self.max_priority and self.sampler is not None:
            self.max_priority = prio
        self.prio[slot] = prio
        if self.sampler is not None:
            self.sampler.set_one(slot, prio ** self.alpha if prio > 0.0 else 0.0)

    def write(self, slots: np.ndarray, prio: Optional[np.ndarray]) -> None:
        """New items at ``slots`` (distinct): ``prio`` (from :meth:`check`) or the current maximum."""
        if prio is None:
            self.prio[slots] = self.max_priority
        else:
            self.prio[slots] = prio
            if self.sampler is not None:
                self.max_priority = max(self.max_priority, float(prio.max()))
        if self.sampler is not None:
            self.sampler.set(slots, self.weights(self.prio[slots]))

    def erase(self, slots: np.ndarray) -> None:
        """Evicted items: never sampled again."""
        self.prio[slots] = 0.0
        if self.sampler is not None:
            self.sampler.set(slots, np.zeros(slots.size), 0.0, 0.0)

    # ---- sampling ------------------------------------------------------------------------------
    def draw(self, size: int, rng: np.random.Generator, hi: int, replace: bool,
             limit: Optional[Limit] = None) -> Optional[Tuple[Slots, Floats, float]]:
        """``size`` slots, their leaves (a fresh array) and ``tau`` (``inf`` but for a distinct batch
        with certain items): i.i.d. proportional draws (``replace``; ``limit`` may then replace some of
        them, e.g. copies past ``max_use``) or a distinct pi-ps batch (see the module docstring). None
        when the batch cannot be filled (fewer than ``size`` items of positive weight)."""
        sampler = self._sampler()
        if not replace:
            return sampler.sample_distinct(size, rng, hi)
        slots, w = sampler.sample_weighted(size, rng, hi)
        if limit is not None:
            capped = limit(slots)
            if capped is not slots:
                if capped is None:
                    return None
                slots, w = capped, sampler.weights(capped)
        return slots, w, _INF

    def sample(self, size: int, rng: np.random.Generator, hi: int, sample_calls: int, replace: bool,
               limit: Optional[Limit] = None) -> Optional[Tuple[Slots, Optional[npt.NDArray[np.float32]]]]:
        """:meth:`draw`'s slots and their IS weights (float32, or None when ``priority_IS_weight`` is off)."""
        got = self.draw(size, rng, hi, replace, limit)
        if got is None:
            return None
        slots, w, tau = got
        return slots, self.is_weights(w, sample_calls, tau)

    def draw_excluding(self, k: int, rng: np.random.Generator, hi: int, exhausted: Slots) -> Slots:
        """``k`` i.i.d. proportional slots with the (sorted, distinct) ``exhausted`` ones left out
        (:meth:`~stride.data.block_sampler.BlockSumSampler.sample_excluding`; empty when none is left)."""
        return self._sampler().sample_excluding(k, rng, hi, exhausted)

    def is_weights(self, leaves: Floats, sample_calls: int, tau: float = math.inf) -> Optional[npt.NDArray[np.float32]]:
        """IS weights (float32) of the slots whose ``leaves`` (a fresh array: scaled in place) were
        drawn, or None when ``priority_IS_weight`` is off."""
        if not self.is_weight:
            return None
        beta = self.beta0 if self.anneal_step <= 0 else \
            min(1.0, self.beta0 + (1.0 - self.beta0) * sample_calls / self.anneal_step)  # (= self.beta(sample_calls))
        out: npt.NDArray[np.float32] = np.power(self.relative_weights(leaves, tau), -beta, dtype=np.float32)
        return out

    def importance_weights(self, leaves: Floats, beta: float, tau: float = math.inf) -> Floats:
        """PER's weights ``(N q)^-beta`` over their largest possible value (float64; ``leaves`` is
        scaled in place): :meth:`relative_weights` to the power ``-beta``."""
        out: Floats = np.power(self.relative_weights(leaves, tau), -beta)
        return out

    def relative_weights(self, leaves: Floats, tau: float = math.inf) -> Floats:
        """``min(leaf, tau) / min(w_min, tau)`` in place, ``w_min`` the least positive leaf of all:
        each drawn item's share of a batch over the least likely item's (>= 1)."""
        w_min = self._sampler().min_positive()
        if tau != _INF:
            np.minimum(leaves, tau, out=leaves)
            w_min = min(w_min, tau)
        leaves *= 1.0 / w_min
        return leaves

    def _sampler(self) -> BlockSumSampler:
        if self.sampler is None:
            raise RuntimeError("this PriorityTable is not prioritized (priority=False): it keeps no sampling weights")
        return self.sampler

    # ---- the learner's priorities ----------------------------------------------------------------
    def update(self, uids: Slots, slots: Slots, prio: npt.NDArray[np.float64], ids: Slots) -> int:
        """Set the priorities ``prio`` of the items ``uids`` at ``slots`` (a sampled batch's
        :class:`~stride.data.buffer.protocol.Ticket`) where ``ids[slot]`` still equals the id;
        returns how many entries were applied (a repeated slot keeps its last value)."""
        if not (slots.size == uids.size == prio.size):
            raise ValueError(f"update got {uids.size} ids, {slots.size} indices and {prio.size} priorities")
        if not slots.size:
            return 0
        # a NaN/inf is a learner bug even for a stale entry: raise
        lo, hi = float(np.minimum.reduce(prio)), float(np.maximum.reduce(prio))
        if not math.isfinite(lo + hi):
            raise ValueError(f"priorities must be finite, got {prio[~np.isfinite(prio)][:5].tolist()}")
        if lo < self.min_priority:
            prio = np.maximum(prio, self.min_priority)
            lo = max(lo, self.min_priority)
            hi = max(hi, self.min_priority)
        # an index past the end raises IndexError; a negative one counts from the end and only
        # applies if that slot holds that id (it names the same item)
        held = ids.take(slots)
        slots = slots % self.capacity  # (cheaper than looking for a negative index first)
        if held.tobytes() != uids.tobytes():  # some ids went stale (one comparison of bytes when none did)
            ok = held == uids
            slots, prio = slots[ok], prio[ok]
            if not slots.size:
                return 0
            lo, hi = float(np.minimum.reduce(prio)), float(np.maximum.reduce(prio))
        # a repeated slot: NumPy assigns in order, the same way in both arrays (the last value wins)
        self.prio[slots] = prio
        a = self.alpha
        self._sampler().set(slots, np.power(prio, a), hi ** a, lo ** a)
        if hi > self.max_priority:
            self.max_priority = hi
        return int(slots.size)

    # ---- state ---------------------------------------------------------------------------------
    def sampler_state(self) -> Optional[Dict[str, float]]:
        """What sampling depends on besides the weights (the sampler's bound; None when not prioritized)."""
        return self.sampler.state() if self.sampler is not None else None

    def load_sampler_state(self, state: Optional[Mapping[str, float]]) -> None:
        if self.sampler is not None and state is not None:
            self.sampler.load_state(state)

    def reset(self) -> None:
        self.prio[:] = 0.0
        self.max_priority = 1.0
        if self.sampler is not None:
            self.sampler.clear()

    def restore(self, slots: np.ndarray, prio: np.ndarray) -> None:
        """Priorities of restored items (``load_data`` / ``load_state_dict``), leaves rebuilt at once."""
        self.prio[slots] = prio
        if self.sampler is not None:
            leaves = np.zeros(self.capacity)
            leaves[slots] = self.weights(np.asarray(prio, dtype=np.float64))
            self.sampler.set_all(leaves)
