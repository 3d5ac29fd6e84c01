"""Deterministic selectors: :class:`FIFOSelector`, :class:`LIFOSelector` (Reverb's ``Fifo``, ``Lifo``;
its heaps had no caller here and are gone).

Deprecated: no Stride buffer or pipeline samples in insertion order (replay draws at random; on-policy
unrolls go straight to the learner), so both stay one release as RL-Flow's names (a
``DeprecationWarning`` on construction) and then go.

They answer ``sample_batch(n)`` with the same id ``n`` times (probability 1), exactly as ``n`` calls
of Reverb's ``Sample()``: consuming items is the table's job (remove what was sampled), not the
selector's. Removal is lazy (stale entries skipped, compacted when they dominate).
"""

from __future__ import annotations

import warnings
from collections import deque
from typing import Any, Deque, Dict, List, Mapping, Tuple

import numpy as np

from .selector import Selector, SeedLike, as_integer

__all__ = ["FIFOSelector", "LIFOSelector"]


class _OrderSelector(Selector):
    """Insertion order with lazy deletion: a deque of ``(seq, id)``; stale entries are skipped."""

    _from_newest = False

    def __init__(self, rng: SeedLike = None) -> None:
        warnings.warn(f"{type(self).__name__} is deprecated and goes next release: no Stride buffer samples in "
                      "insertion order; keep the order in your own deque", DeprecationWarning, stacklevel=2)
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
