"""Index draws for replay sampling: i.i.d. uniform slots, distinct batches, batches under per-slot caps.

* :func:`uniform_ints` -- ``rng.integers(0, hi, size=n)``: the with-replacement draws of every
  buffer (kept bit for bit, so ``replace=True`` runs reproduce). Through NumPy's public API only:
  an earlier version passed an ``int`` subclass with its own ``prod()`` as the size to skip
  ``np.prod(size)`` inside NumPy's bounded-integer code (~1 us of ~5 us), which relied on a private
  detail of NumPy; the saving is given up.
* :func:`uniform_index` -- ``floor(u * hi)`` from one ``rng.random(n)``: uniform up to the 2^-53
  resolution of a double (each value gets ``2^53 / hi`` of the ``2^53`` outcomes, give or take
  one), ~1 us cheaper again than :func:`uniform_ints`. The without-replacement draws use it: their
  draws change anyway, and the saving pays for the repeat check below.
* :class:`BatchLimit` -- how often a slot may appear in one batch, the one implementation every
  buffer uses. :meth:`~BatchLimit.uniform`: ``n`` distinct slots, every ``n``-subset of the
  population equally likely (simple random sampling, DI-engine's ``choice(replace=False)``):
  a few more i.i.d. draws than ``n`` and one check for repeats (~0.4 us for 64: each draw stamps
  its position into a scratch array, and reading the stamps back gives the positions byte for
  byte exactly when no slot repeats); NumPy's ``choice(replace=False)`` costs ~11 us (argument
  checks, Floyd's algorithm, a shuffle), i.i.d. draws ~2 us. :meth:`~BatchLimit.capped`: i.i.d.
  draws under per-slot caps (``replace=True`` under ``max_use``: the remaining uses): the first
  ``n`` accepted of the stream of i.i.d. draws when a draw of a slot that already holds its
  ``cap`` copies is rejected -- the batch as it was drawn up to the first copy too many.
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple, TypeVar

import numpy as np
import numpy.typing as npt

Slots = npt.NDArray[np.int64]
_T = TypeVar("_T", bound=np.generic)

#: ``draw(k, exhausted)``: ``k`` i.i.d. slots from the base distribution restricted to the slots
#: not in ``exhausted`` (sorted, distinct); an empty result means nothing is left to draw.
Draw = Callable[[int, Slots], Slots]
#: ``cap(slots)``: how many copies of each slot one batch may hold (>= 1 for every usable slot).
Cap = Callable[[Slots], npt.NDArray[np.int64]]


def read_only(a: npt.NDArray[_T]) -> npt.NDArray[_T]:
    """A view of ``a`` that cannot be written through (how the buffers show their per-slot metadata)."""
    view = a.view()
    view.flags.writeable = False
    return view


def uniform_ints(rng: np.random.Generator, hi: int, n: int) -> np.ndarray:
    """``n`` int64 values uniform over ``[0, hi)``: exactly ``rng.integers(0, hi, size=n)``."""
    return rng.integers(0, hi, size=n)


def uniform_index(rng: np.random.Generator, hi: int, n: int) -> np.ndarray:
    """``n`` int64 values uniform over ``[0, hi)`` as ``floor(u * hi)``, ``u = rng.random(n)``.

    ``u * hi < hi`` always holds in round-to-nearest (``u <= 1 - 2^-53``), so no clamp is needed."""
    return (rng.random(n) * hi).astype(np.int64)


def occurrence_rank(x: np.ndarray) -> np.ndarray:
    """For each element, how many equal elements precede it (0 for a first occurrence)."""
    n = x.size
    order = np.argsort(x, kind="stable")
    xs = x[order]
    ar = np.arange(n)
    start = np.empty(n, dtype=bool)
    start[:1] = True
    np.not_equal(xs[1:], xs[:-1], out=start[1:])
    first = np.maximum.accumulate(np.where(start, ar, 0))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = ar - first
    return rank


def uniform_excluding(rng: np.random.Generator, k: int, hi: int, exhausted: np.ndarray,
                      live: Optional[np.ndarray] = None) -> np.ndarray:
    """``k`` i.i.d. slots uniform over the population minus ``exhausted`` (a sorted subset of it).

    The population is ``live`` (sorted slots) or the slots ``0..hi-1``. Rejection while at least
    half of it is left (each round sized for the expected acceptance), else one uniform draw over
    the explicit rest. Empty when nothing is left."""
    e = int(exhausted.size)
    if 2 * e <= hi:
        got, parts = 0, []
        while got < k:
            m = int((k - got) * hi / (hi - e) * 1.25) + 8
            pos = uniform_index(rng, hi, m)
            s = pos if live is None else live.take(pos)
            s = s[~np.isin(s, exhausted)] if e else s
            parts.append(s)
            got += s.size
        return np.concatenate(parts)[:k] if len(parts) > 1 else parts[0][:k]
    rest = np.setdiff1d(np.arange(hi) if live is None else live, exhausted, assume_unique=True)
    if not rest.size:
        return rest.astype(np.int64)
    return rest.take(uniform_index(rng, rest.size, k))


class BatchLimit:
    """How often a slot may appear in one batch, over ``capacity`` slots (see the module docstring).

    One instance per buffer: it owns the scratch array of batch positions (int32, 4 bytes a slot)."""

    def __init__(self, capacity: int) -> None:
        self._stamp = np.zeros(int(capacity), dtype=np.int32)
        self._pos: Dict[int, Tuple[np.ndarray, bytes]] = {}  # batch size -> (0..n-1 as int32, its bytes)

    def _positions(self, n: int) -> Tuple[np.ndarray, bytes]:
        pos = self._pos.get(n)
        if pos is None:
            ar = np.arange(n, dtype=np.int32)
            pos = self._pos[n] = (ar, ar.tobytes())
        return pos

    def distinct(self, slots: np.ndarray) -> bool:
        """Whether no slot repeats (~0.4 us for 64: one scattered write, one gather, one bytes compare)."""
        ar, ar_bytes = self._pos.get(slots.size) or self._positions(slots.size)
        stamp = self._stamp
        stamp[slots] = ar  # a repeated slot keeps its last position ...
        return stamp.take(slots).tobytes() == ar_bytes  # ... so its earlier copies read back another one

    def draw(self, rng: np.random.Generator, hi: int, n: int, replace: bool,
             live: Optional[Slots] = None) -> Slots:
        """``n`` slots uniform over the population (``live``, sorted slots, or ``0..hi-1``): i.i.d.
        (``replace``: :func:`uniform_ints`) or distinct, every subset alike (:meth:`uniform`). The
        uniform batch of every buffer and of :class:`~stride.data.selectors.UniformSelector`."""
        if not replace:
            return self.uniform(rng, hi, n, live)
        pos = rng.integers(0, hi, size=n)  # (= uniform_ints: one call layer less on the hot path)
        return pos if live is None else live.take(pos)

    def uniform(self, rng: np.random.Generator, hi: int, n: int, live: Optional[np.ndarray] = None) -> np.ndarray:
        """``n`` distinct slots of the population (``live``, sorted slots, or ``0..hi-1``; ``hi >= n``),
        every ``n``-subset equally likely.

        ``m = n + n^2 // hi + 3`` i.i.d. draws (:func:`uniform_index`; the margin covers the expected
        ``~n^2 / 2hi`` repeats a few times over); the first ``n`` if all ``m`` are distinct (the usual
        case, one check), else the first ``n`` of the draws that hold each value's last copy (one
        boolean mask), drawing ``m`` more while fewer than ``n`` values came. Populations under
        ``4 n``: ``Generator.choice(replace=False)`` (Floyd's algorithm). Each rule looks only at
        which draws are equal, never at the values, so the result is invariant under relabelling the
        items: every ``n``-subset equally likely (simple random sampling)."""
        if 4 * n > hi:
            pos = rng.choice(hi, n, replace=False)
            return pos if live is None else live.take(pos)
        m = n + n * n // hi + 3
        ar, ar_bytes = self._positions(m)
        x = uniform_index(rng, hi, m)
        if live is not None:
            x = live.take(x)
        stamp = self._stamp
        stamp[x] = ar
        back = stamp.take(x)
        if back.tobytes() == ar_bytes:
            return x[:n]
        once = x[back == ar]  # each value once (its last copy), in draw order
        while once.size < n:  # (rare: more than m - n repeats)
            more = uniform_index(rng, hi, m)
            x = np.concatenate([x, more if live is None else live.take(more)])
            ar = np.arange(x.size, dtype=np.int32)
            stamp[x] = ar
            once = x[stamp.take(x) == ar]
        out: Slots = once[:n]
        return out

    def capped(self, slots: np.ndarray, draw: Draw, cap: Cap) -> Optional[np.ndarray]:
        """``slots`` (``n`` i.i.d. draws) with every copy past a slot's ``cap`` replaced by further
        draws, exhausted slots rejected: the first ``n`` accepted of the stream of i.i.d. draws (so
        ``replace=True`` batches under ``max_use`` keep their draws up to the first excess copy).
        None if the population cannot fill the batch (``draw`` came back empty)."""
        if self.distinct(slots):  # every usable slot may appear at least once
            return slots
        n = slots.size
        ok = occurrence_rank(slots) < cap(slots)
        if ok.all():  # repeats, none past its cap
            return slots
        kept = slots[ok]
        while kept.size < n:
            vals, counts = np.unique(kept, return_counts=True)
            cand = draw(n - kept.size, vals[counts >= cap(vals)])
            if not cand.size:
                return None
            ok = occurrence_rank(np.concatenate([kept, cand]))[kept.size:] < cap(cand)
            kept = np.concatenate([kept, cand[ok][: n - kept.size]])
        return kept
