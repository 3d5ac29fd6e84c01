"""Deterministic selectors: :class:`FIFOSelector`, :class:`LIFOSelector`, :class:`MaxHeapSelector`,
:class:`MinHeapSelector` (Reverb's ``Fifo``, ``Lifo``, ``MaxHeap``, ``MinHeap``).

They answer ``sample_batch(n)`` with the same id ``n`` times (probability 1), exactly as ``n`` calls
of Reverb's ``Sample()``: consuming items is the table's job (remove what was sampled), not the
selector's. Removal is lazy (stale entries skipped, compacted when they dominate).
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import Any, Deque, Dict, List, Mapping, Tuple

import numpy as np

from .selector import Selector, SeedLike, as_integer

__all__ = ["FIFOSelector", "LIFOSelector", "MaxHeapSelector", "MinHeapSelector"]


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
        self._next_seq = as_integer(state["next_seq"])


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
        self._next_seq = as_integer(state["next_seq"])


class MaxHeapSelector(_HeapSelector):
    """Always the highest priority; ties go to the least recently inserted/updated id (Reverb)."""

    _sign = -1.0


class MinHeapSelector(_HeapSelector):
    """Always the lowest priority; ties go to the least recently inserted/updated id (Reverb)."""

    _sign = 1.0
