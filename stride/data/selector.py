"""The selector interface: which stored item replay hands out next (RL-Flow's sampling schemes, Reverb's selectors).

Every selector keeps a set of integer ids (any ``int``: slot numbers, counters, hashes) and answers
``sample()`` with one of them. The interface is RL-Flow's README form, ``add(id, priority)``,
``sample()``, ``remove(id)``, ``update_priorities(id, priority)``, plus batched variants
(``add_batch``, ``sample_batch(n) -> (ids, probabilities)``, ``remove_batch``,
``update_priorities_batch``), ``__len__``, ``__contains__``, ``clear()`` and
``state_dict()``/``load_state_dict()`` holding only plain arrays and numbers.

This module holds :class:`Selector`, its errors and the id / state checks every selector shares.
The selectors that draw at random are in :mod:`stride.data.selectors` (:class:`UniformSelector`,
:class:`PrioritizedSelector`); the deterministic ones in :mod:`stride.data.order_selectors`
(:class:`FIFOSelector`, :class:`LIFOSelector`);
``stride.data.selectors`` exports all of them.

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

import operator
from abc import ABC, abstractmethod
from typing import Any, Dict, Iterable, List, Mapping, Optional, SupportsIndex, Tuple, Union

import numpy as np
import numpy.typing as npt

from ..utils.errors import StrideError
from .block_sampler import FloatsLike

SeedLike = Union[None, int, np.random.Generator]
Ids = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
IdsLike = Union[Iterable[int], Ids]
ArrayLike = FloatsLike  # (the name earlier versions exported)

__all__ = ["Selector", "SelectorKeyError", "EmptySelectorError", "SeedLike", "as_id", "as_ids", "as_number",
           "as_integer", "as_priorities"]


class SelectorKeyError(StrideError, KeyError):
    """An id was added twice, or removed/updated without being present."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class EmptySelectorError(StrideError, LookupError):
    """``sample`` was called on a selector holding no ids."""


def as_id(key: object) -> int:
    """An id as a Python int; floats, strings and None are refused (ids are exact)."""
    if not isinstance(key, SupportsIndex):
        raise TypeError(f"selector ids must be integers, got {key!r} ({type(key).__name__})")
    return operator.index(key)


def as_ids(keys: Union[Iterable[int], np.ndarray]) -> List[int]:
    """Ids as Python ints (an integer array converts in one call; each other id through :func:`as_id`)."""
    if isinstance(keys, np.ndarray) and np.issubdtype(keys.dtype, np.integer):
        return keys.reshape(-1).tolist()  # already exact Python ints
    return [as_id(k) for k in (keys.tolist() if isinstance(keys, np.ndarray) else keys)]


def as_number(value: object) -> float:
    """A saved number (plain or a 0-d array) as a float; anything else is a TypeError."""
    if isinstance(value, (int, float, np.number, np.ndarray)) and not isinstance(value, bool):
        return float(value)
    raise TypeError(f"expected a number in the selector's state, got {value!r}")


def as_integer(value: object) -> int:
    """A saved integer (Python or NumPy) as an int; anything else is a TypeError."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise TypeError(f"expected an integer in the selector's state, got {value!r}")


def as_priorities(priorities: Optional[ArrayLike], n: int, default: float = 1.0) -> np.ndarray:
    """``n`` priorities as float64: ``default`` when None, one value broadcast, else exactly ``n``."""
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
        keys = as_ids(ids)
        prio = self._check_priorities(as_priorities(priorities, len(keys)))
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
        keys = as_ids(ids)
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
        keys = as_ids(ids)
        prio = self._check_priorities(as_priorities(priorities, len(keys)))
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
