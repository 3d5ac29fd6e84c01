"""Selectors: which stored item replay hands out next (RL-Flow's sampling schemes, Reverb's selectors).

Every selector keeps a set of integer ids (any ``int``: slot numbers, counters, hashes) and answers
``sample()`` with one of them. The interface is RL-Flow's README form, ``add(id, priority)``,
``sample()``, ``remove(id)``, ``update_priorities(id, priority)``, plus batched variants
(``add_batch``, ``sample_batch(n) -> (ids, probabilities)``, ``remove_batch``,
``update_priorities_batch``), ``__len__``, ``__contains__``, ``clear()`` and
``state_dict()``/``load_state_dict()`` holding only plain arrays and numbers.

Classes: :class:`UniformSelector`, :class:`PrioritizedSelector`, :class:`FIFOSelector`,
:class:`LIFOSelector`, :class:`MaxHeapSelector`, :class:`MinHeapSelector`.

How it differs from the peers, on purpose:

* Reverb semantics for mistakes: adding an id twice, or removing/updating an unknown id, raises a
  :class:`SelectorKeyError` naming the id (RL-Flow silently skips, DI-engine silently drops stale
  priority updates), and a batch with a bad id changes nothing. Sampling an empty selector raises
  :class:`EmptySelectorError` (RL-Flow returns ``(None, None)``, DI-engine ``None`` + a print).
* ids need not be small slot numbers (RL-Flow's uniform scheme indexes an array with them): the
  uniform and prioritized selectors keep dense positions with swap-with-last removal.
* The uniform and prioritized selectors draw with the replay buffers' own machinery (one
  implementation per rule): :mod:`stride.data.draws` for uniform batches, the
  :class:`~stride.data.block_sampler.BlockSumSampler` for proportional ones (whole batches per
  NumPy call; capacity grows as needed). By default a batch is i.i.d. (Reverb's and PER's
  semantics; ``stratified=True`` for DI-engine's lower-variance draws); ``replace=False`` gives the
  buffers' default batches of distinct ids. RL-Flow zeroes out sampled items instead.
* Every selector owns its ``numpy.random.Generator`` (seed or generator in the constructor) and
  saves its state, so a resumed run samples exactly what the original would have.
* Deterministic selectors (FIFO/LIFO/heaps) answer ``sample_batch(n)`` with the same id ``n`` times
  (probability 1), exactly as ``n`` calls of Reverb's ``Sample()``: consuming items is the table's
  job (remove what was sampled), not the selector's.
"""

from __future__ import annotations

import heapq
import math
import operator
from abc import ABC, abstractmethod
from collections import deque
from typing import Any, Deque, Dict, Iterable, List, Mapping, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from ..utils.errors import StrideError
from .block_sampler import FloatsLike
from .draws import BatchLimit
from .priority import PriorityTable

SeedLike = Union[None, int, np.random.Generator]
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
    "MaxHeapSelector",
    "MinHeapSelector",
]


class SelectorKeyError(StrideError, KeyError):
    """An id was added twice, or removed/updated without being present."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class EmptySelectorError(StrideError, LookupError):
    """``sample`` was called on a selector holding no ids."""


def _as_id(key: Any) -> int:
    """An id as a Python int; floats, strings and None are refused (ids are exact)."""
    try:
        return operator.index(key)
    except TypeError:
        raise TypeError(f"selector ids must be integers, got {key!r} ({type(key).__name__})") from None


def _as_ids(keys: Union[Iterable[int], np.ndarray]) -> List[int]:
    if isinstance(keys, np.ndarray) and np.issubdtype(keys.dtype, np.integer):
        return keys.reshape(-1).tolist()  # already exact Python ints
    return [_as_id(k) for k in (keys.tolist() if isinstance(keys, np.ndarray) else keys)]


def _number(value: object) -> float:
    """A saved number (plain or a 0-d array) as a float; anything else is a TypeError."""
    if isinstance(value, (int, float, np.number, np.ndarray)) and not isinstance(value, bool):
        return float(value)
    raise TypeError(f"expected a number in the selector's state, got {value!r}")


def _integer(value: object) -> int:
    """A saved integer (Python or NumPy) as an int; anything else is a TypeError."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise TypeError(f"expected an integer in the selector's state, got {value!r}")


def _as_priorities(priorities: Optional[ArrayLike], n: int, default: float = 1.0) -> np.ndarray:
    if priorities is None:
        return np.full(n, default)
    p = np.asarray(priorities, dtype=np.float64).reshape(-1)
    if p.size == 1 and n != 1:
        p = np.full(n, float(p[0]))
    if p.size != n:
        raise ValueError(f"got {n} ids but {p.size} priorities")
    return p


class Selector(ABC):
    """Common interface and RNG handling; subclasses implement the ``_``-prefixed batch methods."""

    def __init__(self, rng: SeedLike = None) -> None:
        self._rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    # ---- single-item interface (RL-Flow README) --------------------------------------------
    def add(self, id: int, priority: float = 1.0) -> None:
        """Insert ``id`` with ``priority``; an id already present raises :class:`SelectorKeyError`."""
        self.add_batch([id], [priority])

    def remove(self, id: int) -> None:
        """Delete ``id``; an absent id raises :class:`SelectorKeyError`."""
        self.remove_batch([id])

    def update_priorities(self, id: int, priority: float) -> None:
        """Set the priority of ``id``; an absent id raises :class:`SelectorKeyError`."""
        self.update_priorities_batch([id], [priority])

    def sample(self) -> int:
        """One id (see the class for how it is chosen)."""
        return int(self.sample_batch(1)[0][0])

    # ---- batched interface ------------------------------------------------------------------
    def add_batch(self, ids: Union[Iterable[int], np.ndarray], priorities: Optional[ArrayLike] = None) -> None:
        """Insert several ids at once (all or nothing)."""
        keys = _as_ids(ids)
        prio = self._check_priorities(_as_priorities(priorities, len(keys)))
        unique = set(keys)
        if len(unique) != len(keys) or not self._keys().isdisjoint(unique):
            seen = set()
            for k in keys:  # slow path, only to name the offending id
                if k in seen or k in self:
                    raise SelectorKeyError(f"id {k} is already in the {type(self).__name__}")
                seen.add(k)
        if keys:
            self._add(keys, prio)

    def remove_batch(self, ids: Union[Iterable[int], np.ndarray]) -> None:
        """Delete several ids at once (all or nothing; repeating an id in the batch is an error)."""
        keys = _as_ids(ids)
        unique = set(keys)
        if len(unique) != len(keys) or not unique <= self._keys():
            seen = set()
            for k in keys:
                if k in seen or k not in self:
                    raise SelectorKeyError(f"id {k} is not in the {type(self).__name__}")
                seen.add(k)
        if keys:
            self._remove(keys)

    def update_priorities_batch(self, ids: Union[Iterable[int], np.ndarray], priorities: ArrayLike) -> None:
        """Set the priorities of several ids (all or nothing; a repeated id keeps its last priority)."""
        keys = _as_ids(ids)
        prio = self._check_priorities(_as_priorities(priorities, len(keys)))
        unique = set(keys)
        if not unique <= self._keys():
            missing = next(k for k in keys if k not in self)
            raise SelectorKeyError(f"id {missing} is not in the {type(self).__name__}")
        if len(unique) != len(keys):  # explicit "last one wins" (NumPy's fancy assignment does not promise it)
            last = dict(zip(keys, prio.tolist()))
            keys, prio = list(last), np.array(list(last.values()))
        if keys:
            self._update(keys, prio)

    def sample_batch(self, n: int) -> Tuple[np.ndarray, np.ndarray]:
        """``n`` ids and the probability with which each was chosen (int64, float64 arrays)."""
        n = int(n)
        if n < 0:
            raise ValueError(f"sample_batch needs n >= 0, got {n}")
        if len(self) == 0:
            raise EmptySelectorError(f"cannot sample from an empty {type(self).__name__}")
        return self._sample(n)

    # ---- helpers ----------------------------------------------------------------------------
    def _check_priorities(self, prio: np.ndarray) -> np.ndarray:
        if prio.size and not np.all(np.isfinite(prio)):
            raise ValueError(f"priorities must be finite, got {prio[~np.isfinite(prio)][:5].tolist()}")
        return prio

    def _rng_state(self) -> Dict[str, Any]:
        return dict(self._rng.bit_generator.state)

    def _load_rng_state(self, state: object) -> None:
        if state is not None:
            if not isinstance(state, Mapping):
                raise TypeError(f"a selector's saved rng state is a dict, got {type(state).__name__}")
            self._rng.bit_generator.state = dict(state)

    # ---- to implement -----------------------------------------------------------------------
    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def __contains__(self, id: object) -> bool: ...

    @abstractmethod
    def _keys(self) -> Any:
        """The stored ids as a set-like view (membership tests for whole batches run in C)."""

    @abstractmethod
    def clear(self) -> None:
        """Forget every id."""

    @abstractmethod
    def state_dict(self) -> Dict[str, object]:
        """Plain arrays/numbers (and the RNG state) that :meth:`load_state_dict` restores exactly."""

    @abstractmethod
    def load_state_dict(self, state: Mapping[str, object]) -> None:
        """Restore what :meth:`state_dict` returned."""

    @abstractmethod
    def _add(self, keys: List[int], prio: np.ndarray) -> None: ...

    @abstractmethod
    def _remove(self, keys: List[int]) -> None: ...

    @abstractmethod
    def _update(self, keys: List[int], prio: np.ndarray) -> None: ...

    @abstractmethod
    def _sample(self, n: int) -> Tuple[np.ndarray, np.ndarray]: ...


# ============================================================================ dense selectors
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
        keys = _as_ids(ids)
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
        if _number(state["priority_exponent"]) != self.priority_exponent:
            raise ValueError(
                f"state has priority_exponent {state['priority_exponent']}, this selector {self.priority_exponent}"
            )
        self.clear()
        self.add_batch(np.asarray(state["ids"], dtype=np.int64), np.asarray(state["priorities"]))
        bound = state.get("sampler")
        if isinstance(bound, Mapping):
            self.table.load_sampler_state({str(k): _number(v) for k, v in bound.items()})
        self._load_rng_state(state.get("rng"))


# ============================================================================ ordered selectors
class _OrderSelector(Selector):
    """Insertion order with lazy deletion: a deque of ``(seq, id)``; stale entries are skipped."""

    _from_newest = False

    def __init__(self, rng: SeedLike = None) -> None:
        super().__init__(rng)
        self._seq: Dict[int, int] = {}  # id -> insertion number (dict keeps insertion order)
        self._order: Deque[Tuple[int, int]] = deque()
        self._next_seq = 0

    def __len__(self) -> int:
        return len(self._seq)

    def __contains__(self, id: object) -> bool:
        return id in self._seq

    def _keys(self) -> Any:
        return self._seq.keys()

    def _add(self, keys: List[int], prio: np.ndarray) -> None:
        for k in keys:
            self._seq[k] = self._next_seq
            self._order.append((self._next_seq, k))
            self._next_seq += 1

    def _remove(self, keys: List[int]) -> None:
        for k in keys:
            del self._seq[k]
        if len(self._order) > 2 * len(self._seq) + 64:  # drop stale entries from the middle
            self._order = deque((s, k) for k, s in self._seq.items())

    def _update(self, keys: List[int], prio: np.ndarray) -> None:
        pass  # priorities do not change the order (Reverb)

    def _head(self) -> int:
        order = self._order
        while True:
            seq, k = order[-1] if self._from_newest else order[0]
            if self._seq.get(k) == seq:
                return int(k)
            if self._from_newest:
                order.pop()
            else:
                order.popleft()

    def _sample(self, n: int) -> Tuple[np.ndarray, np.ndarray]:
        return np.full(n, self._head(), dtype=np.int64), np.ones(n)

    def clear(self) -> None:
        self._seq.clear()
        self._order.clear()

    def state_dict(self) -> Dict[str, object]:
        return {
            "ids": np.fromiter(self._seq.keys(), dtype=np.int64, count=len(self._seq)),
            "seqs": np.fromiter(self._seq.values(), dtype=np.int64, count=len(self._seq)),
            "next_seq": self._next_seq,
        }

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self.clear()
        for k, s in zip(np.asarray(state["ids"]).tolist(), np.asarray(state["seqs"]).tolist()):
            self._seq[int(k)] = int(s)
            self._order.append((int(s), int(k)))
        self._next_seq = _integer(state["next_seq"])


class FIFOSelector(_OrderSelector):
    """Always the oldest inserted id still present (priorities ignored; updates don't reorder). O(1)."""


class LIFOSelector(_OrderSelector):
    """Always the newest inserted id still present (priorities ignored; updates don't reorder). O(1)."""

    _from_newest = True


class _HeapSelector(Selector):
    """Lazy-deletion binary heap of ``(key, seq, id)``; ties go to the smallest ``seq``."""

    _sign = 1.0

    def __init__(self, rng: SeedLike = None) -> None:
        super().__init__(rng)
        self._entry: Dict[int, Tuple[float, int]] = {}  # id -> (priority, seq of last insert/update)
        self._heap: List[Tuple[float, int, int]] = []
        self._next_seq = 0

    def __len__(self) -> int:
        return len(self._entry)

    def __contains__(self, id: object) -> bool:
        return id in self._entry

    def _keys(self) -> Any:
        return self._entry.keys()

    def _push(self, keys: List[int], prio: np.ndarray) -> None:
        for k, p in zip(keys, prio.tolist()):
            self._entry[k] = (p, self._next_seq)
            heapq.heappush(self._heap, (self._sign * p, self._next_seq, k))
            self._next_seq += 1
        self._maybe_compact()

    _add = _push
    _update = _push  # an update counts as "recent" for tie-breaking, as in Reverb

    def _remove(self, keys: List[int]) -> None:
        for k in keys:
            del self._entry[k]
        self._maybe_compact()

    def _maybe_compact(self) -> None:
        if len(self._heap) > 2 * len(self._entry) + 64:
            self._heap = [(self._sign * p, s, k) for k, (p, s) in self._entry.items()]
            heapq.heapify(self._heap)

    def _top(self) -> int:
        heap = self._heap
        while True:
            _, seq, k = heap[0]
            entry = self._entry.get(k)
            if entry is not None and entry[1] == seq:
                return k
            heapq.heappop(heap)

    def _sample(self, n: int) -> Tuple[np.ndarray, np.ndarray]:
        return np.full(n, self._top(), dtype=np.int64), np.ones(n)

    def clear(self) -> None:
        self._entry.clear()
        self._heap.clear()

    def state_dict(self) -> Dict[str, object]:
        n = len(self._entry)
        return {
            "ids": np.fromiter(self._entry.keys(), dtype=np.int64, count=n),
            "priorities": np.fromiter((p for p, _ in self._entry.values()), dtype=np.float64, count=n),
            "seqs": np.fromiter((s for _, s in self._entry.values()), dtype=np.int64, count=n),
            "next_seq": self._next_seq,
        }

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self.clear()
        ids = np.asarray(state["ids"]).tolist()
        prios = np.asarray(state["priorities"], dtype=np.float64).tolist()
        seqs = np.asarray(state["seqs"]).tolist()
        for k, p, s in zip(ids, prios, seqs):
            self._entry[int(k)] = (float(p), int(s))
        self._heap = [(self._sign * p, s, k) for k, (p, s) in self._entry.items()]
        heapq.heapify(self._heap)
        self._next_seq = _integer(state["next_seq"])


class MaxHeapSelector(_HeapSelector):
    """Always the highest priority; ties go to the least recently inserted/updated id (Reverb)."""

    _sign = -1.0


class MinHeapSelector(_HeapSelector):
    """Always the lowest priority; ties go to the least recently inserted/updated id (Reverb)."""

    _sign = 1.0
