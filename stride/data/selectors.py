"""Selectors that draw at random: :class:`UniformSelector` and :class:`PrioritizedSelector`.

They draw with the replay buffers' own machinery (one implementation per rule):
:mod:`stride.data.draws` for uniform batches, :class:`~stride.data.priority.PriorityTable` (over the
:class:`~stride.data.block_sampler.BlockSumSampler`) for proportional ones, and keep dense positions
with swap-with-last removal, so ids need not be small slot numbers. The interface and its error
semantics are :mod:`stride.data.selector`'s; this module also exports the deterministic selectors
of :mod:`stride.data.order_selectors`, so ``stride.data.selectors`` names all four.

:class:`UniformSelector` is the episode buffer's sampling part (:mod:`stride.data.buffer.episode`).
:class:`PrioritizedSelector` has no caller in Stride -- the advanced buffer samples its ring's slots
with :class:`~stride.data.buffer.slot_selector.SlotSelector` over the same ``PriorityTable`` -- so it
stays one release as RL-Flow's name (a ``DeprecationWarning`` on construction) and then goes, as the
FIFO and LIFO selectors do.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Tuple, Union

import numpy as np
import numpy.typing as npt

from .block_sampler import FloatsLike
from .draws import BatchLimit
from .order_selectors import FIFOSelector, LIFOSelector
from .priority import PriorityTable
from .selector import EmptySelectorError, Selector, SelectorKeyError, SeedLike, as_ids, as_number

Ids = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
IdsLike = Union[Iterable[int], Ids]
ArrayLike = FloatsLike  # (the name earlier versions exported)

__all__ = [
    "Selector",
    "SelectorKeyError",
    "EmptySelectorError",
    "UniformSelector",
    "PrioritizedSelector",
    "FIFOSelector",
    "LIFOSelector",
]


class _DenseSelector(Selector):
    """ids in a dense array + id -> position map; removal moves the last id into the hole."""

    def __init__(self, rng: SeedLike = None, initial_capacity: int = 1024, replace: bool = True) -> None:
        super().__init__(rng)
        self.replace = bool(replace)
        self._ids = np.zeros(max(int(initial_capacity), 1), dtype=np.int64)
        self._pos: Dict[int, int] = {}
        self._limit = BatchLimit(self._ids.size)  # distinct batches (scratch array of the capacity)

    def __len__(self) -> int:
        return len(self._pos)

    def __contains__(self, id: object) -> bool:
        return id in self._pos

    def _keys(self) -> Any:
        return self._pos.keys()

    def ids(self) -> np.ndarray:
        """The stored ids (in dense-position order)."""
        return self._ids[: len(self._pos)].copy()

    def _grow_to(self, size: int) -> None:
        """Make room for ``size`` ids (capacity doubles)."""
        cap = self._ids.size
        if size <= cap:
            return
        while cap < size:
            cap *= 2
        self._resize(cap)

    def _resize(self, capacity: int) -> None:
        ids = np.zeros(capacity, dtype=np.int64)
        ids[: len(self._pos)] = self._ids[: len(self._pos)]
        self._ids = ids
        self._limit = BatchLimit(capacity)

    def _sample_uniform(self, n: int) -> Tuple[Ids, Floats]:
        """``n`` ids, every stored id alike: i.i.d. (``replace``) or distinct (every subset alike)."""
        size = len(self._pos)
        if not self.replace and n > size:
            raise ValueError(f"cannot draw {n} distinct ids from a {type(self).__name__} of {size}")
        pos = self._limit.draw(self._rng, size, n, self.replace)
        return self._ids[pos], np.full(n, 1.0 / size)

    def _add(self, keys: List[int], prio: np.ndarray) -> None:
        start = len(self._pos)
        self._grow_to(start + len(keys))
        self._ids[start : start + len(keys)] = keys
        for i, k in enumerate(keys):
            self._pos[k] = start + i
        self._set_weights(np.arange(start, start + len(keys)), prio)

    def _remove(self, keys: List[int]) -> None:
        touched = []
        for k in keys:
            pos = self._pos.pop(k)
            last = len(self._pos)  # size after the pop
            if pos != last:
                moved = int(self._ids[last])
                self._ids[pos] = moved
                self._pos[moved] = pos
                self._move_weight(last, pos)
            touched.append(pos)
            touched.append(last)
        self._refresh_weights(np.array(touched, dtype=np.int64))

    def _update(self, keys: List[int], prio: np.ndarray) -> None:
        self._set_weights(np.fromiter(map(self._pos.__getitem__, keys), dtype=np.int64, count=len(keys)), prio)

    def clear(self) -> None:
        self._pos.clear()
        self._clear_weights()

    # hooks for the prioritized selector; the uniform one ignores priorities
    def _set_weights(self, positions: np.ndarray, prio: np.ndarray) -> None:
        pass

    def _move_weight(self, src: int, dst: int) -> None:
        pass

    def _refresh_weights(self, positions: np.ndarray) -> None:
        pass

    def _clear_weights(self) -> None:
        pass


class UniformSelector(_DenseSelector):
    """Every stored id equally likely; priorities are accepted and ignored. O(1) per id.

    ``replace=True`` (default, Reverb's semantics): ``sample_batch(n)`` draws i.i.d.
    (:func:`~stride.data.draws.uniform_ints`, the draws of the buffers' ``replace=True``);
    ``replace=False``: ``n`` distinct ids, every ``n``-subset alike
    (:meth:`~stride.data.draws.BatchLimit.uniform`, the buffers' default batches).
    """

    def _sample(self, n: int) -> Tuple[Ids, Floats]:
        return self._sample_uniform(n)

    def state_dict(self) -> Dict[str, object]:
        return {"ids": self.ids(), "rng": self._rng_state()}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self.clear()
        ids = np.asarray(state["ids"], dtype=np.int64)
        self.add_batch(ids)
        self._load_rng_state(state.get("rng"))


class PrioritizedSelector(_DenseSelector):
    """``P(id) = priority ** priority_exponent / sum``, sampled by ``AdvancedReplayBuffer``'s own
    :class:`~stride.data.priority.PriorityTable` (its ``BlockSumSampler``: rejection sampling, the
    two-level search, pi-ps batches; PER's importance weights) over the ids' dense positions.

    Priorities must be finite and >= 0; an id with priority 0 is never sampled (unless every
    priority is 0: then all ids are equally likely, so replay never stalls). ``sample_batch``
    draws i.i.d. (Reverb, PER); ``stratified=True`` draws one id per equal-mass segment
    (DI-engine, lower variance); ``replace=False`` draws ``n`` distinct ids, id ``i`` included with
    probability ``n P(i)`` (capped at 1, the buffers' default batches), and reports each id's share
    of the batch (``P(i)`` unless some id is certain). :meth:`importance_weights` turns the latest
    batch's probabilities into PER's normalised IS weights ``(N p)^-beta / max``.
    """

    def __init__(
        self,
        priority_exponent: float = 0.6,
        rng: SeedLike = None,
        initial_capacity: int = 1024,
        stratified: bool = False,
        replace: bool = True,
    ) -> None:
        warnings.warn("PrioritizedSelector is deprecated and goes next release: prioritized replay is "
                      "the advanced buffer with its config's priority=True (stride.data.buffer), which samples "
                      "with the same PriorityTable", DeprecationWarning, stacklevel=2)
        exponent = float(priority_exponent)
        if not (np.isfinite(exponent) and exponent >= 0):
            raise ValueError(f"priority_exponent must be finite and >= 0, got {priority_exponent!r}")
        self.priority_exponent = exponent
        self.stratified = bool(stratified)
        super().__init__(rng, initial_capacity, replace)
        self.table = self._new_table(self._ids.size)
        self._scale: Tuple[int, float] = (0, math.inf)  # (n, tau) of the latest batch: tau < inf if some id was certain

    def _new_table(self, capacity: int) -> PriorityTable:
        return PriorityTable(capacity, True, self.priority_exponent, 1.0, 0, 0.0, True, self._limit)

    def _resize(self, capacity: int) -> None:
        size = len(self._pos)
        super()._resize(capacity)
        old, self.table = self.table, self._new_table(capacity)
        bound = old.sampler_state()
        self.table.restore(np.arange(size), old.prio[:size])
        self.table.load_sampler_state(bound)  # (the same bound of the weights: growing does not change the draws)

    def _check_priorities(self, prio: Floats) -> Floats:
        prio = super()._check_priorities(prio)
        if prio.size and prio.min() < 0:
            raise ValueError(f"priorities must be >= 0, got {prio[prio < 0][:5].tolist()}")
        return prio

    def _set_weights(self, positions: Ids, prio: Floats) -> None:
        self.table.write(positions, prio)

    def _move_weight(self, src: int, dst: int) -> None:
        self.table.prio[dst] = self.table.prio[src]

    def _refresh_weights(self, positions: Ids) -> None:
        live = positions < len(self._pos)
        self.table.erase(positions[~live])
        kept = positions[live]
        if kept.size:
            self.table.write(kept, self.table.prio[kept])

    def _clear_weights(self) -> None:
        self.table.reset()

    def priorities(self, ids: IdsLike) -> Floats:
        """Current priorities of ``ids`` (unknown ids raise :class:`SelectorKeyError`)."""
        keys = as_ids(ids)
        missing = [k for k in keys if k not in self._pos]
        if missing:
            raise SelectorKeyError(f"id {missing[0]} is not in the {type(self).__name__}")
        return self.table.prio[[self._pos[k] for k in keys]]

    def _total(self) -> float:
        return self.table.sampler.total() if self.table.sampler is not None else 0.0

    def _sample(self, n: int) -> Tuple[Ids, Floats]:
        total = self._total()
        self._scale = (n, math.inf)
        if total <= 0.0:  # every priority is 0: fall back to uniform
            return self._sample_uniform(n)
        if self.stratified and self.replace and n > 0:
            sampler, rng = self.table.sampler, self._rng
            assert sampler is not None
            pos = sampler.find((np.arange(n) + rng.random(n)) * (total / n))
            pos = pos[rng.permutation(n)]  # segments come out sorted; don't leak that order
            return self._ids[pos], sampler.weights(pos) / total
        got = self.table.draw(n, self._rng, len(self._pos), self.replace)
        if got is None:
            raise ValueError(f"cannot draw {n} distinct ids: fewer have a positive priority")
        pos, w, tau = got
        self._scale = (n, tau)
        return self._ids[pos], (w / total if tau == math.inf else np.minimum(w, tau) / (n * tau))

    def importance_weights(self, probabilities: FloatsLike, beta: float) -> Floats:
        """PER weights ``(N p)^-beta`` divided by their largest possible value (least likely item):
        :meth:`~stride.data.priority.PriorityTable.importance_weights` of the latest batch.

        Dividing by the maximum over *all stored* items, not just this batch, keeps the scale of
        the loss independent of which items the batch happens to contain (as DI-engine/PER do)."""
        p = np.asarray(probabilities, dtype=np.float64)
        total = self._total()
        if total <= 0.0:  # uniform fallback: every weight is 1
            return np.ones_like(p)
        n, tau = self._scale
        leaves = p * (total if tau == math.inf else n * tau)
        return self.table.importance_weights(leaves, float(beta), tau)

    def state_dict(self) -> Dict[str, object]:
        size = len(self._pos)
        return {
            "ids": self.ids(),
            "priorities": self.table.prio[:size].copy(),
            "priority_exponent": self.priority_exponent,
            "sampler": self.table.sampler_state(),
            "rng": self._rng_state(),
        }

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        if as_number(state["priority_exponent"]) != self.priority_exponent:
            raise ValueError(
                f"state has priority_exponent {state['priority_exponent']}, this selector {self.priority_exponent}"
            )
        self.clear()
        self.add_batch(np.asarray(state["ids"], dtype=np.int64), np.asarray(state["priorities"]))
        bound = state.get("sampler")
        if isinstance(bound, Mapping):
            self.table.load_sampler_state({str(k): as_number(v) for k, v in bound.items()})
        self._load_rng_state(state.get("rng"))
