"""``BlockSumSampler``: proportional (prioritized) sampling over slots, a whole batch per NumPy call.

Why not a binary sum tree: in NumPy every call costs about a microsecond whatever its size, and a
level-by-level descent of a 100k-leaf tree is ~17 gathers for sampling plus ~17 for updating.
Tianshou's ``SegmentTree`` (vectorised NumPy / Numba) pays that per level; this sampler answers a
batch of 64 in ~10 calls and updates 64 leaves in ~7, with exact sums (no drift), which is what
lets ``AdvancedReplayBuffer``'s prioritized sample+update run several times faster than Tianshou's.
"""

from __future__ import annotations

import math
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from .draws import BatchLimit, uniform_ints
from .pps import systematic_pps

Slots = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
#: float values as callers hold them: a sequence of Python floats or an array of any float width
FloatsLike = Union[Sequence[float], npt.NDArray[np.float16], npt.NDArray[np.float32], npt.NDArray[np.float64]]

_UP, _DOWN = 1.0 + 1e-12, 1.0 - 1e-12  # margins for weights computed outside NumPy's power loop
_INF = math.inf


class BlockSumSampler:
    """Proportional sampling over ``capacity`` slots: leaf weights plus exact sums of 64-leaf blocks.

    * **Rejection sampling** (the usual path, exact): candidates are drawn uniformly from the
      occupied range ``[0, hi)`` and accepted with probability ``leaf / w_max``, where ``w_max`` is
      a maintained upper bound of every leaf; accepted candidates are i.i.d. with probability
      ``leaf / total``. One ``rng.integers`` (via :func:`~stride.data.draws.uniform_ints`, same
      draws) and one ``rng.random`` call, a gather, a comparison, the indices of the accepted
      candidates and two takes answer the batch, and the accepted leaves come back too (the
      buffer's IS weights need no second gather). ``k`` is sized from the expected acceptance rate
      ``total / (w_max * hi)``; a short batch draws again (rare). Replay priorities are
      |TD|^alpha, seldom more than a few times their mean. (Candidates from one ``rng.random(2k)``
      would save ~3 us per call, but change the draws, hence every prioritized training run.)
    * **Two-level search** (when ``w_max * hi / total`` exceeds ``MAX_REJECTION_RATIO`` even after
      tightening the bound, which happens at most every ``REFRESH`` calls): one running sum over
      the ``capacity / 64`` block sums + ``searchsorted`` picks the blocks, then the chosen blocks'
      leaves are gathered back to back and one flat running sum + ``searchsorted`` picks the leaf
      in each (no per-level loop). A query pushed onto a zero leaf by rounding is resolved exactly;
      a zero leaf is never returned. It costs ~45 us at 64 samples (NumPy's running sums are
      slow), what rejection costs at ``w_max * hi / total`` ~ 50 (measured at 40k items), so the
      threshold could be raised to ~50 for speed; it stays at 8, where the draws of existing
      prioritized runs were made.
    * ``set`` rewrites leaves and recomputes the touched blocks' sums exactly from their leaves (no
      drift ever accumulates, unlike trees updated by deltas). The smallest positive leaf (for IS
      weights) is cached and only recomputed after the leaf holding it changed.
    * **Distinct batches** (:meth:`sample_distinct`, prioritized replay without replacement): a
      pi-ps design, slot ``i`` in the batch with probability exactly ``n leaf_i / total`` (capped at
      1, the rest shared alike: :mod:`stride.data.pps`). Not successive sampling (draw
      proportionally, drop repeats, draw again), whose inclusion probabilities drift from ``n p_i``
      on small buffers (``tests/data/test_replay_batches.py`` shows its test would fail).

      - Big buffers: **Sampford's method** (1967): unit 1 drawn proportionally to the leaves, the
        other ``n - 1`` with replacement proportionally to ``leaf / (total - n leaf)``, the batch
        kept if all ``n`` are distinct, else drawn afresh (kept with probability
        ~``exp(-n^2 sum p^2 / 2)``: ~94% for 64 of the benchmark's 40k items). It rides on the
        rejection sampler: the second law is the first thinned with probability ``(total - n
        w_max) / (total - n leaf)``, decided by the uniform that accepted the candidate (given
        acceptance it is uniform below the leaf); see :meth:`_sampford` for the one comparison
        that settles it in ~85% of the batches. Candidate slots and their acceptance uniforms come
        from one ``rng.random(2k)`` (~1 us less than ``rng.integers`` + ``rng.random``; the draws
        of this mode are new anyway). Cost at the benchmark's 40k items: ~2.5 us over an i.i.d.
        batch (~7 us; ``per64``, sample + update, +13%) -- the thinning check ~0.9 us, the repeat
        check ~0.7 us, batches drawn again for a repeat (~7%) ~0.4 us, the full thinning test
        (~8%) ~0.3 us, the rest call overhead, less the ~0.7 us the single ``rng.random`` saves;
        each is a handful of NumPy calls on 64 values, whose fixed cost is the floor
        (``benchmarks/buffers/README.md``, issue 13).
      - Small buffers (where ``n (n - 1) / (2 hi) > SAMPFORD_MAX_LOAD``: Sampford would keep under
        ~22% of its batches), a bound ``n w_max`` above ``SAMPFORD_MAX_SHARE`` of the total (items
        that may be certain; the bound is tightened first), and ``SAMPFORD_TRIES`` rejected batches
        in a row: **randomized systematic sampling** over the explicit positive leaves, certainty
        items first (O(N): ~17 us at 100 items, ~28 us at 1000, ~80 us at 5000).

      Both designs have the same inclusion probabilities, so choosing between them -- even after
      failed attempts, which leave no trace on the next, independent draws -- keeps them exact.
    """

    SHIFT = 6
    BLOCK = 1 << SHIFT
    MAX_REJECTION_RATIO = 8.0  # rejection while w_max * hi / total is at most this (see the class docstring)
    REFRESH = 64  # sample calls between exact recomputations of w_max
    SAMPFORD_MAX_LOAD = 1.5  # Sampford while n (n - 1) / (2 hi) <= this (it keeps at most ~exp(-this) of its batches)
    SAMPFORD_MAX_SHARE = 0.5  # ... and n w_max / total <= this (the thinning keeps at least 1 - this)
    SAMPFORD_TRIES = 4  # rejected Sampford batches in a row before systematic sampling answers

    def __init__(self, capacity: int, limit: Optional[BatchLimit] = None) -> None:
        """``limit``: the :class:`~stride.data.draws.BatchLimit` its distinct batches are checked with
        (a buffer passes its own: one scratch array per buffer); default: a new one."""
        b = self.BLOCK
        self.capacity = int(capacity)
        self._nb = (self.capacity + b - 1) // b
        self._w = np.zeros(self._nb * b)
        self._w2 = self._w.reshape(self._nb, b)
        self._bsum = np.zeros(self._nb)
        self._min: Optional[float] = math.inf  # smallest positive leaf; None: recompute
        self._min_slot = -1  # a slot that held it (checked when it is read: see min_positive)
        self._wmax = 0.0  # upper bound of every leaf
        self._since_refresh = 0
        self._shift = np.array(self.SHIFT, dtype=np.int64)  # (a 0-d array operand: no scalar conversion per call)
        self._limit = BatchLimit(self.capacity) if limit is None else limit  # repeat checks of Sampford batches

    # ---- reads -------------------------------------------------------------------------------
    def weights(self, slots: Slots) -> Floats:
        """The leaves at ``slots`` (a fresh array)."""
        return self._w.take(slots)

    def leaves(self) -> np.ndarray:
        return self._w[: self.capacity].copy()

    @property
    def bound(self) -> float:
        """The maintained upper bound of every leaf (rejection sampling's ``w_max``)."""
        return self._wmax

    def block_sums(self) -> Floats:
        """A copy of the exact sums of the 64-leaf blocks (the last one padded with zero leaves)."""
        return self._bsum.copy()

    def total(self) -> float:
        return float(np.add.reduce(self._bsum))

    def min_positive(self) -> float:
        """The smallest positive leaf (inf when none).

        Writes only ever lower the cached minimum (a smaller positive weight is seen as it is
        written); a write that raises or clears the leaf holding it is noticed here, by one scalar
        read of that slot, and only then are the leaves scanned. So ``set`` never has to look at
        the leaves it overwrites."""
        m = self._min
        if m is None or (self._min_slot >= 0 and self._w[self._min_slot] != m):
            pos = np.flatnonzero(self._w > 0)
            if pos.size:
                j = int(pos[np.argmin(self._w[pos])])
                m, self._min_slot = float(self._w[j]), j
            else:
                m, self._min_slot = math.inf, -1
            self._min = m
        return m

    # ---- writes ------------------------------------------------------------------------------
    def set(self, slots: np.ndarray, weights: np.ndarray, top: Optional[float] = None,
            low: Optional[float] = None) -> None:
        """``leaf[slots] = weights`` (a repeated slot keeps its last value, consistently in leaves and
        sums). ``top`` / ``low``: the largest / smallest of ``weights`` when the caller knows them
        (e.g. ``max(p)^alpha`` computed on a Python float: trusted to a relative 1e-12, which saves
        two reductions per call)."""
        self._w[slots] = weights
        blk = np.right_shift(slots, self._shift)
        self._bsum[blk] = np.add.reduce(self._w2.take(blk, axis=0), axis=1)
        if not slots.size:
            return
        top = float(np.maximum.reduce(weights)) if top is None else top * _UP
        if top > self._wmax:
            self._wmax = top  # only ever an upper bound: rejection stays exact
        m = self._min
        if m is not None and (low is None or low * _DOWN < m):  # may hold a new minimum: look exactly
            j = int(np.argmin(weights))
            low = float(weights[j])
            if low > 0:
                if low < m:
                    self._min, self._min_slot = low, int(slots[j])
            elif top > 0:  # a mix of zeros and positive weights: recompute lazily
                self._min = None

    def set_one(self, slot: int, weight: float) -> None:
        """:meth:`set` for one slot, with Python scalars."""
        self._w[slot] = weight
        blk = slot >> self.SHIFT
        self._bsum[blk] = np.add.reduce(self._w2[blk])
        if weight > self._wmax:
            self._wmax = weight
        if self._min is not None and 0.0 < weight < self._min:
            self._min, self._min_slot = weight, slot

    def set_all(self, weights: np.ndarray) -> None:
        self._w[:] = 0.0
        self._w[: self.capacity] = weights
        self._bsum[:] = self._w2.sum(axis=1)
        self._min = None
        self._wmax = float(self._w.max())
        self._since_refresh = 0

    def clear(self) -> None:
        self._w[:] = 0.0
        self._bsum[:] = 0.0
        self._min, self._min_slot = math.inf, -1
        self._wmax = 0.0
        self._since_refresh = 0

    def state(self) -> Dict[str, float]:
        """What sampling depends on besides the leaves (for an exact resume)."""
        return {"wmax": self._wmax, "since_refresh": self._since_refresh}

    def load_state(self, state: Mapping[str, float]) -> None:
        self._wmax = float(state["wmax"])
        self._since_refresh = int(state["since_refresh"])

    # ---- sampling ----------------------------------------------------------------------------
    def sample(self, n: int, rng: np.random.Generator, hi: Optional[int] = None) -> np.ndarray:
        """``n`` i.i.d. slots with probability ``leaf / total`` (the total must be > 0); every
        positive leaf lies below ``hi`` (default: the capacity)."""
        return self.sample_weighted(n, rng, hi)[0]

    def sample_weighted(self, n: int, rng: np.random.Generator,
                        hi: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
        """As :meth:`sample`, plus the chosen slots' leaves (``weights(slots)``, a fresh array)."""
        hi = self.capacity if hi is None else int(hi)
        total = float(np.add.reduce(self._bsum))
        self._since_refresh += 1
        wmax = self._wmax
        ratio = wmax * hi / total
        if ratio > self.MAX_REJECTION_RATIO and self._since_refresh >= self.REFRESH:
            self._wmax = wmax = float(np.maximum.reduce(self._w[:hi]))  # the bound may be stale: tighten it
            self._since_refresh = 0
            ratio = wmax * hi / total
        if ratio > self.MAX_REJECTION_RATIO:
            slots = self._sample_blocks(n, rng)
            return slots, self._w.take(slots)
        # rejection sampling: candidates uniform over [0, hi), each accepted with probability
        # leaf / w_max; the first n accepted are i.i.d. with probability leaf / total
        k = int(n * ratio * 1.25) + 16  # expected accepted: k / ratio >= 1.25 n
        cand = uniform_ints(rng, hi, k)
        wc = self._w.take(cand)
        u = rng.random(k)
        u *= wmax
        acc = np.less(u, wc).nonzero()[0]  # accepted candidates, in draw order
        if acc.size >= n:  # the usual case: one round
            acc = acc[:n]
            return cand.take(acc), wc.take(acc)
        return self._more(cand.take(acc), wc.take(acc), n, rng, hi, ratio)

    def _more(self, s: np.ndarray, ws: np.ndarray, n: int, rng: np.random.Generator, hi: int,
              ratio: float) -> Tuple[np.ndarray, np.ndarray]:
        """Further rejection rounds until ``n`` candidates were accepted (``s``, ``ws``: so far)."""
        w, wmax = self._w, self._wmax
        got_s: List[np.ndarray] = [s]
        got_w: List[np.ndarray] = [ws]
        need = n - s.size
        while need > 0:
            k = int(need * ratio * 1.25) + 16
            cand = uniform_ints(rng, hi, k)
            wc = w.take(cand)
            acc = rng.random(k) * wmax < wc
            got_s.append(cand[acc][:need])
            got_w.append(wc[acc][:need])
            need -= got_s[-1].size
        return np.concatenate(got_s), np.concatenate(got_w)

    def sample_excluding(self, k: int, rng: np.random.Generator, hi: int, exhausted: np.ndarray) -> np.ndarray:
        """``k`` i.i.d. slots proportional to the leaves with the slots ``exhausted`` (sorted, distinct,
        below ``hi``) left out; empty when no positive leaf is left. Rejection (:meth:`sample`, then
        the exhausted dropped) while they hold at most half the total, else one running sum over the
        explicit leaves."""
        total = float(np.add.reduce(self._bsum))
        ex = float(np.add.reduce(self._w.take(exhausted))) if exhausted.size else 0.0
        if 2.0 * ex <= total and total > 0.0:
            got, parts = 0, []
            while got < k:
                s = self.sample(int((k - got) * total / (total - ex) * 1.25) + 8, rng, hi)
                s = s[~np.isin(s, exhausted)] if exhausted.size else s
                parts.append(s)
                got += s.size
            return np.concatenate(parts)[:k] if len(parts) > 1 else parts[0][:k]
        leaves = self._w[:hi].copy()
        leaves[exhausted] = 0.0
        cum = np.cumsum(leaves)
        if not cum[-1] > 0.0:
            return np.empty(0, dtype=np.int64)
        idx: Slots = cum.searchsorted(rng.random(k) * cum[-1], side="right")
        return np.minimum(idx, int(np.flatnonzero(leaves)[-1]))

    # ---- distinct batches (without replacement) ------------------------------------------------
    def sample_distinct(self, n: int, rng: np.random.Generator,
                        hi: Optional[int] = None) -> Optional[Tuple[np.ndarray, np.ndarray, float]]:
        """``n`` distinct slots, slot ``i`` included with probability ``n min(leaf_i, tau) / sum_j
        min(leaf_j, tau)`` -- ``n leaf_i / total`` unless some slot must be taken with certainty
        (then ``tau`` is finite, see :func:`~stride.data.pps.certainty_items`) -- with their leaves
        and ``tau``; None when fewer than ``n`` leaves are positive. Every positive leaf lies below
        ``hi`` (default: the capacity). See the class docstring for the design."""
        hi = self.capacity if hi is None else int(hi)
        total = float(np.add.reduce(self._bsum[: (hi + self.BLOCK - 1) >> self.SHIFT]))  # (all positive leaves)
        if not total > 0.0 or n <= 0:
            return None if n > 0 else (np.empty(0, dtype=np.int64), np.empty(0), math.inf)
        self._since_refresh += 1
        wmax = self._wmax
        share = n * wmax
        if share > self.SAMPFORD_MAX_SHARE * total or (
                wmax * hi > self.MAX_REJECTION_RATIO * total and self._since_refresh >= self.REFRESH):
            # the bound may be stale: tighten it (what follows costs O(hi) anyway, or is due)
            self._wmax = wmax = float(np.maximum.reduce(self._w[:hi]))
            self._since_refresh = 0
            share = n * wmax
        if share <= self.SAMPFORD_MAX_SHARE * total and n * (n - 1) <= 2.0 * self.SAMPFORD_MAX_LOAD * hi:
            got = self._sampford(n, rng, hi, total, wmax)
            if got is not None:
                return got
        leaves = self._w[:hi]
        pos = np.flatnonzero(leaves > 0.0)
        if pos.size < n:
            return None
        wp = leaves.take(pos)
        idx, tau = systematic_pps(wp, n, rng)
        return pos.take(idx), wp.take(idx), tau

    def _sampford(self, n: int, rng: np.random.Generator, hi: int, total: float,
                  wmax: float) -> Optional[Tuple[np.ndarray, np.ndarray, float]]:
        """Sampford's method, up to ``SAMPFORD_TRIES`` attempts: ``(slots, leaves, inf)``, or None if
        every attempt drew a repeat.

        Candidates are uniform over ``[0, hi)``, each with ``t = u w_max`` (``u`` uniform) and
        accepted if ``t < leaf``: proportionally to the leaves. Unit 1 is the first accepted; each
        later one is the next accepted that the thinning keeps: ``t (total - n leaf) < leaf (total -
        n w_max)`` -- given acceptance ``t`` is uniform below the leaf, so this keeps it with
        probability ``(total - n w_max) / (total - n leaf)``, i.e. the later units are drawn
        proportionally to ``leaf / (total - n leaf)``. That test holds whatever the leaf when
        ``t total / (total - n w_max) < leaf``, so the usual case is one check of that over the first
        ``n`` accepted; in ~``n^2 w_max / total`` of the batches (~15% at the benchmark's 40k
        items) one of them needs the full test, and only if it drops one (~6%) do more candidates
        come in (:meth:`_sampford_rounds`)."""
        tries = self.SAMPFORD_TRIES
        if wmax * hi > self.MAX_REJECTION_RATIO * total:
            for _ in range(tries):
                got = self._sampford_rounds(n, rng, hi, total, wmax)
                if got is not None:
                    return got[0], got[1], _INF
            return None
        w, distinct = self._w, self._limit.distinct
        c2 = total - n * wmax  # > 0 (n w_max <= SAMPFORD_MAX_SHARE total)
        sure = total / c2
        k = int(n * wmax * hi / c2 * 1.25) + 16  # expected kept: >= 1.25 n
        hi_f = float(hi)
        while tries:
            tries -= 1
            u = rng.random(2 * k)  # candidates and their acceptance uniforms: one call
            cand = (u[:k] * hi_f).astype(np.int64)
            wc = w.take(cand)
            t = u[k:]
            t *= wmax
            acc = np.less(t, wc).nonzero()[0]  # accepted proportionally to the leaves
            if acc.size >= n:
                sel = acc[:n]
                kept = True
                ws = wc.take(sel)
                ts = t.take(sel)
                ts *= sure
                sure_kept = np.less(ts, ws).tobytes().count(1)  # (bytes.count: ~0.1 us less than count_nonzero)
                if sure_kept != n and (sure_kept != n - 1 or ts[0] < ws[0]):  # (unit 1 is not thinned)
                    ts = t.take(sel)
                    ts[0] = 0.0
                    kept = np.less(ts * (total - n * ws), ws * c2).tobytes().count(1) == n  # (else one is thinned out)
                if kept:
                    slots = cand.take(sel)
                    if distinct(slots):
                        return slots, ws, _INF
                    continue
            got = self._sampford_rounds(n, rng, hi, total, wmax, (cand, wc, t))
            if got is not None:
                return got[0], got[1], _INF
        return None

    def _sampford_rounds(self, n: int, rng: np.random.Generator, hi: int, total: float, wmax: float,
                         first_round: Optional[Tuple[np.ndarray, ...]] = None) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """One Sampford attempt with the thinning test evaluated for every accepted candidate, in as
        many rounds as it takes (``first_round``: ``(cand, leaves, t)`` already drawn, ``t`` as in
        :meth:`_sampford`); ``(slots, leaves)``, or None if the batch holds a repeat. Candidates come
        from the two-level search when the leaves are too skewed for rejection (then they are
        proportional to the leaves already, with ``t`` uniform below the leaf)."""
        w = self._w
        c2 = total - n * wmax
        blocks = wmax * hi > self.MAX_REJECTION_RATIO * total
        need, first = n, True
        got_s: List[np.ndarray] = []
        got_w: List[np.ndarray] = []
        while need > 0:
            if first_round is not None:
                (cand, wc, t), first_round = first_round, None
                acc = np.less(t, wc).nonzero()[0]
            elif blocks:
                k = int(need * total / c2 * 1.25) + 4
                cand = self._sample_blocks(k, rng)
                wc = w.take(cand)
                t = rng.random(k)
                t *= wc
                acc = np.arange(k)
            else:
                k = int(need * wmax * hi / c2 * 1.25) + 16
                u = rng.random(2 * k)
                cand = (u[:k] * hi).astype(np.int64)
                wc = w.take(cand)
                t = u[k:]
                t *= wmax
                acc = np.less(t, wc).nonzero()[0]
            if first and not acc.size:
                continue
            wa = wc.take(acc)
            keep = t.take(acc) * (total - n * wa) < wa * c2  # thinned: proportional to leaf / (total - n leaf)
            if first:
                keep[0] = True  # unit 1: proportional to the leaves
                first = False
            sel = acc[keep][:need]
            got_s.append(cand.take(sel))
            got_w.append(wc.take(sel))
            need -= sel.size
        slots = np.concatenate(got_s)
        if not self._limit.distinct(slots):
            return None
        return slots, np.concatenate(got_w)

    def find(self, prefix_sums: FloatsLike) -> Slots:
        """The slot whose cumulative range of leaves holds each prefix sum ``u`` in ``[0, total)``
        (the two-level search; a sum at or past the total, or one that rounding puts on a zero
        leaf, goes to the last positive leaf before it: a zero leaf is never returned)."""
        u = np.asarray(prefix_sums, dtype=np.float64).reshape(-1)
        return self._find(u, np.add.accumulate(self._bsum))

    def _sample_blocks(self, n: int, rng: np.random.Generator) -> Slots:
        cum = np.add.accumulate(self._bsum)
        return self._find(rng.random(n) * cum[-1], cum)

    def _find(self, u: Floats, cum: Floats) -> Slots:
        """:meth:`find` with the running sum ``cum`` of the block sums already taken."""
        b, bsum, n = self.BLOCK, self._bsum, u.size
        blk = cum.searchsorted(u, side="right")
        np.minimum(blk, self._nb - 1, out=blk)
        r = u - (cum.take(blk) - bsum.take(blk))  # position inside the chosen block
        # the chosen blocks' leaves back to back: one flat running sum (NumPy accumulates a flat array
        # faster than the rows of a 2-D one) and one searchsorted, shifted by each row's start
        rows = self._w2.take(blk, axis=0).ravel()
        cs = np.add.accumulate(rows)
        start = np.arange(0, n * b, b)
        pos = cs.searchsorted(r + (cs.take(start) - rows.take(start)), side="right") - start
        np.clip(pos, 0, b - 1, out=pos)
        slots: Slots = blk * b + pos
        bad = self._w.take(slots) <= 0.0
        if bad.any():  # rounding at a block edge: resolve exactly (rare)
            slots[bad] = self._exact(u[bad])
        return slots

    def _exact(self, u: np.ndarray) -> np.ndarray:
        w = self._w
        idx = np.cumsum(w).searchsorted(u, side="right")
        return np.minimum(idx, int(np.flatnonzero(w > 0)[-1]))
