"""``FrameStackStorage``: replay of stacked frames (Atari's ``(4, 84, 84)`` uint8) storing each frame once.

A transition's ``obs`` and ``next_obs`` are ``k``-frame stacks that share ``2k - 1`` frames with each
other and ``k`` with the neighbouring transitions of their env. Stored in full that is ~56 KB per
Atari transition; here every distinct frame is written once to a frame ring, and the two fields
become ``k`` frame numbers each (64 bytes) in the ordinary :class:`~stride.data.storage.ColumnStorage`
columns. A sample rebuilds ``(B, k, H, W)`` stacks with one ``take`` over the frame ring per field.
Every buffer that uses the column storage (naive, advanced: uniform, prioritized, ``max_use``,
staleness, rate control) gets this by config (``replay_buffer.frame_stack=k``): it is the same
storage with two columns held as references, not a second buffer.

Which frames are new, found by content (no env id, no stream bookkeeping asked of the collector):

* ``obs`` is first compared with the ``next_obs`` pushed last whose newest frame has the same
  fingerprint as ``obs``' newest frame (the usual case: the same env's previous step; one dict
  lookup and one comparison of bytes, however many envs interleave);
* ``next_obs[:-1]`` is compared with ``obs[1:]`` (a 1-step transition: only its newest frame is new);
* any other frame is looked up among the frames written in the last ``reuse_horizon`` writes, by a
  fingerprint (a strided sample of its bytes) and then compared byte for byte -- so interleaved
  envs, segment boundaries, n-step ``next_obs``, life-loss episodes whose first stack continues the
  previous life's frames, and reset stacks of repeated frames all store only what is new. A frame
  matches only if its bytes are equal: sampled stacks equal the pushed ones exactly.

Eviction stays consistent: items leave FIFO as in the column storage; a reused frame is at most
``reuse_horizon`` writes old, so an item's frames outlive it while the frame ring (``capacity +
extra_frames`` frames) has written fewer than ``frame_capacity - reuse_horizon`` frames since its
push. When episode starts (``k + 1`` new frames each) use frames faster than that, the oldest items
leave early -- still FIFO -- and the buffers learn which slots left from :meth:`pop_dropped`; an item
whose frames were overwritten is never sampled.

How this compares with the peers, on purpose:

* Stable-Baselines3's ``optimize_memory_usage`` stores full stacks once (``next_obs`` of slot ``i``
  read as ``obs`` of slot ``i + 1``): 2x, not ``2k``x, and the terminal ``next_obs`` is lost (the slot
  after an episode end holds the reset observation), so it refuses ``handle_timeout_termination``
  (SB3 issue #934; CleanRL's Atari DQN hit it, CleanRL issue #460) and a full ring pairs the newest
  item with the oldest one (SB3 issue #1853).
* Tianshou's ``save_only_last_obs`` + ``stack_num`` keeps one frame per step and rebuilds stacks from
  the previous steps of the same buffer (one buffer per env), ``obs_next`` from the following step:
  the terminal ``next_obs`` is not the one the env returned (seen with Tianshou 2.0.1), and
  a first stack that continues earlier frames (a life-loss episode) is rebuilt by repeating its
  first frame.
* Dopamine's ``OutOfGraphReplayBuffer`` stores single frames of one stream added in order and
  rebuilds stacks with zeros before an episode start -- right only because its agent zero-pads its
  own stack too; n-step and terminal handling are its own (Dopamine issue #228).
* DI-engine stores each transition's full ``obs`` and ``next_obs`` (deep-copied lists of dicts).
* TorchRL stores what it is given per transition; single frames become stacks through its
  ``CatFrames`` transform over sampled trajectory slices (``SliceSampler``, trajectory ids required).

Here stored stacks are exact (terminal and truncated ``next_obs`` included, n-step too), any number
of envs interleave in one buffer without ids, and the saving is ~``2k``-fold (``benchmarks/buffers``:
~7.6 KB per Atari transition against ~56 KB).
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from ..utils.errors import ConfigError
from .storage import ColumnStorage, as_array

STACKED = ("obs", "next_obs")  # the fields held as frame references
_FP_STRIDE = 31  # fingerprint: every 31st byte of a frame (a dict key; equality is checked in full)
_PROBES = 4  # a fingerprint's newest frames compared before a frame is written anew
MAX_TAILS = 1024  # next_obs stacks remembered as likely next obs (one per env stream is enough)
Refs = npt.NDArray[np.int64]


class FrameStackStorage(ColumnStorage):
    """A :class:`ColumnStorage` whose ``obs`` / ``next_obs`` are ``frame_stack``-frame stacks kept in a
    frame ring, each distinct frame once (see the module docstring).

    Args:
        capacity: items (transitions), as for :class:`ColumnStorage`.
        frame_stack: ``k``, the frames per stack (the first axis of ``obs`` / ``next_obs``), >= 2.
        extra_frames: frame slots beyond ``capacity`` (default ``max(capacity // 16, 64k)``): room for
            the ``k`` extra frames of episode starts; half of it is the reuse horizon.
    """

    def __init__(self, capacity: int, frame_stack: int, extra_frames: Optional[int] = None) -> None:
        super().__init__(capacity)
        k = int(frame_stack)
        if k < 2:
            raise ValueError(f"replay_buffer.frame_stack must be >= 2 to store frames once (0: off), got {frame_stack}")
        extra = max(self.capacity // 16, 64 * k) if extra_frames is None else int(extra_frames)
        if extra < 2 * k:
            raise ValueError(f"extra_frames must be >= 2 * frame_stack = {2 * k}, got {extra_frames}")
        self.frame_stack = k
        self.frame_capacity = self.capacity + extra
        self.reuse_horizon = extra // 2  # frames younger than this many writes may be referenced again
        self.frames: Optional[np.ndarray] = None  # (frame_capacity, *frame_shape), allocated on the first push
        self.frame_head = 0  # frames written so far: the next frame's number (slot: number % frame_capacity)
        self._pushed_at = np.zeros(self.capacity, dtype=np.int64)  # frame_head when each slot's item was pushed
        self._buckets: Dict[bytes, List[int]] = {}  # fingerprint -> numbers of frames within the horizon
        # the recent next_obs stacks by their newest frame's fingerprint: an env's next obs is its last next_obs
        self._tails: Dict[bytes, Refs] = {}
        self._dropped: List[int] = []

    # ---- frames ------------------------------------------------------------------------------
    def _stack(self, key: str, value: object) -> np.ndarray:
        """``value`` as a ``(k, *frame)`` array of the frames' dtype, or a one-line error."""
        arr = as_array(value)
        k = self.frame_stack
        if arr.ndim < 2 or arr.shape[0] != k:
            raise ValueError(f"replay_buffer.frame_stack={k} needs '{key}' stacked along its first axis as "
                             f"({k}, ...), got shape {arr.shape}")
        if self.frames is None:
            self.frames = np.zeros((self.frame_capacity, *arr.shape[1:]), dtype=arr.dtype)
        elif arr.shape[1:] != self.frames.shape[1:] or arr.dtype != self.frames.dtype:
            raise ValueError(f"field '{key}' has frames of shape {arr.shape[1:]} and dtype {arr.dtype} but the buffer "
                             f"stores {self.frames.shape[1:]} {self.frames.dtype}")
        return arr

    @staticmethod
    def _key(frame: np.ndarray) -> bytes:
        return frame.reshape(-1)[::_FP_STRIDE].tobytes()

    def _frame_number(self, frame: np.ndarray, key: bytes) -> int:
        """The number of a stored frame equal to ``frame`` (fingerprint ``key``) within the reuse
        horizon, else of ``frame`` written now; the oldest items leave first if its slot still serves
        them."""
        frames, fc = self.frames, self.frame_capacity
        assert frames is not None
        bucket = self._buckets.get(key)
        if bucket:
            data = frame.tobytes()
            for n in reversed(bucket[-_PROBES:]):
                if frames[n % fc].tobytes() == data:
                    return n
        n = self.frame_head
        self._evict_for(n + 1)
        old = n - self.reuse_horizon  # leaves the horizon now: no longer found by content
        if old >= 0:
            old_key = self._key(frames[old % fc])
            old_bucket = self._buckets[old_key]
            old_bucket.pop(0)  # (a bucket lists its frames oldest first)
            if not old_bucket:
                del self._buckets[old_key]
        frames[n % fc] = frame
        if bucket is None or not bucket:  # (the bucket of `old` may just have been this one, now gone)
            self._buckets[key] = [n]
        else:
            bucket.append(n)
        self.frame_head = n + 1
        return n

    def _evict_for(self, head: int) -> None:
        """Drop the oldest items while one may reference a frame the ring overwrites before ``head``."""
        limit = head - (self.frame_capacity - self.reuse_horizon)
        while self.size and self._pushed_at[self.start] < limit:
            self._dropped.append(self.start)
            self.size -= 1

    def _refs(self, stack: np.ndarray, hint: Optional[Refs], last_key: bytes) -> Refs:
        """Frame numbers of ``stack`` (its newest frame's fingerprint ``last_key``): ``hint`` if its
        frames equal it, else each frame found or written."""
        frames, fc = self.frames, self.frame_capacity
        assert frames is not None
        if hint is not None and int(hint.min()) >= self.frame_head - self.reuse_horizon \
                and frames.take(hint % fc, axis=0).tobytes() == stack.tobytes():
            return hint
        refs = np.empty(self.frame_stack, dtype=np.int64)
        for i, frame in enumerate(stack[:-1]):
            refs[i] = self._frame_number(frame, self._key(frame))
        refs[-1] = self._frame_number(stack[-1], last_key)
        return refs

    def _next_refs(self, obs: np.ndarray, next_obs: np.ndarray, obs_refs: Refs, key: bytes) -> Refs:
        """Frame numbers of ``next_obs``: ``obs``' last ``k - 1`` and one new frame for a 1-step transition."""
        if next_obs[:-1].tobytes() != obs[1:].tobytes():
            return self._refs(next_obs, None, key)
        refs = np.empty(self.frame_stack, dtype=np.int64)
        refs[:-1] = obs_refs[1:]
        refs[-1] = self._frame_number(next_obs[-1], key)
        return refs

    def _check(self, item: Mapping[str, object]) -> Tuple[np.ndarray, np.ndarray]:
        """The item's stacks, after checking its fields and their shapes (nothing written yet)."""
        missing = [k for k in STACKED if k not in item]
        if missing:
            raise ValueError(f"replay_buffer.frame_stack={self.frame_stack} stores fields {list(STACKED)} as frames; "
                             f"the item lacks {missing} (fields: {sorted(item)})")
        if self._columns and set(item) != set(self._columns):
            extra, lack = sorted(set(item) - set(self._columns)), sorted(set(self._columns) - set(item))
            raise ValueError(f"item fields differ from the buffer's: missing {lack}, unexpected {extra}")
        return self._stack("obs", item["obs"]), self._stack("next_obs", item["next_obs"])

    def _remember_tail(self, key: bytes, refs: Refs) -> None:
        """Note a pushed ``next_obs`` (its frames ``refs``, its newest frame's fingerprint ``key``) as
        where its env's next ``obs`` probably stands; the oldest of ``MAX_TAILS`` notes is forgotten."""
        tails = self._tails
        tails.pop(key, None)  # (re-inserted last: the order is the age)
        tails[key] = refs
        if len(tails) > MAX_TAILS:
            del tails[next(iter(tails))]

    def _as_refs(self, item: Mapping[str, object], obs: np.ndarray,
                 next_obs: np.ndarray) -> Tuple[Dict[str, object], int]:
        """``item`` with its checked stacks ``obs`` / ``next_obs`` replaced by frame numbers (new frames
        written), and the frame head before (the item's push time)."""
        head = self.frame_head
        obs_key, next_key = self._key(obs[-1]), self._key(next_obs[-1])
        obs_refs = self._refs(obs, self._tails.get(obs_key), obs_key)
        next_refs = self._next_refs(obs, next_obs, obs_refs, next_key)
        self._remember_tail(next_key, next_refs)
        out = dict(item)
        out["obs"], out["next_obs"] = obs_refs, next_refs
        return out, head

    # ---- write -------------------------------------------------------------------------------
    def append_one(self, item: Mapping[str, object], name: object = None) -> int:
        """Store one transition: its new frames to the frame ring, the rest as columns; returns its slot."""
        return self._append_checked(item, *self._check(item))

    def _append_checked(self, item: Mapping[str, object], obs: np.ndarray, next_obs: np.ndarray) -> int:
        refs_item, head = self._as_refs(item, obs, next_obs)
        slot = super().append_one(refs_item)
        self._pushed_at[slot] = head
        return slot

    def append(self, items: Sequence[Mapping[str, object]], names: Optional[Sequence[object]] = None) -> Refs:
        """:meth:`append_one` for each item, in order (the newest ``capacity`` of them). Every item is
        checked first (fields, stacks, the other fields' values), so a refused batch writes nothing."""
        items = items[-self.capacity:]
        if not items:
            return np.empty(0, dtype=np.int64)
        stacks = [self._check(it) for it in items]
        if self._columns:  # the other fields as append would convert them (raises on a bad value)
            for key in self._columns:
                if key not in STACKED:
                    self._column_values(key, [it[key] for it in items])
        return np.fromiter((self._append_checked(it, *st) for it, st in zip(items, stacks)), dtype=np.int64,
                           count=len(items))

    def append_columns(self, columns: Mapping[str, npt.NDArray[np.generic]],
                       names: Optional[Sequence[object]] = None) -> Refs:
        """Rows of full stacks in column form, stored as :meth:`append` stores items."""
        n = len(next(iter(columns.values())))
        return self.append([{k: v[i] for k, v in columns.items()} for i in range(max(0, n - self.capacity), n)])

    @property
    def nbytes(self) -> int:
        """Bytes of the preallocated arrays: the columns (frame numbers for the stacks), the frame ring
        and each slot's push time (the fingerprint dict, at most ``reuse_horizon`` entries, is apart)."""
        frames = self.frames.nbytes if self.frames is not None else 0
        return super().nbytes + frames + self._pushed_at.nbytes

    def pop_dropped(self) -> Refs:
        """Slots whose items left early (their frames were needed) since the last call."""
        if not self._dropped:
            return self._no_slots
        out = np.array(self._dropped, dtype=np.int64)
        self._dropped = []
        return out

    # ---- read --------------------------------------------------------------------------------
    def _expand(self, out: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        frames = self.frames
        if frames is not None:
            for key in STACKED:
                if key in out:  # one gather of (B, k) frame slots -> (B, k, *frame)
                    out[key] = frames.take(out[key] % self.frame_capacity, axis=0)
        return out

    def get_columns(self, slots: np.ndarray, keys: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
        """As :meth:`ColumnStorage.get_columns`, with ``obs`` / ``next_obs`` rebuilt as ``(B, k, *frame)``."""
        return self._expand(super().get_columns(slots, keys))

    def get_items(self, slots: np.ndarray, extra_keys: Tuple[str, ...] = (),
                  extra_values: Sequence[Sequence[object]] = ()) -> List[Dict[str, object]]:
        """As :meth:`ColumnStorage.get_items`; each item's stacks are rows of one gathered copy."""
        items = super().get_items(slots, extra_keys, extra_values)
        stacks = self._expand({k: self._columns[k].take(slots, axis=0) for k in STACKED if k in self._columns})
        for key, rows in stacks.items():
            for item, row in zip(items, rows):
                item[key] = row
        return items

    # ---- housekeeping ------------------------------------------------------------------------
    def clear(self) -> None:
        super().clear()
        self.frame_head = 0
        self._buckets = {}
        self._tails = {}
        self._dropped = []

    def reset_layout(self) -> None:
        super().reset_layout()
        self.frames = None

    # ---- persistence -------------------------------------------------------------------------
    def extra_state(self) -> Dict[str, npt.NDArray[np.generic]]:
        """The frames still in the ring, oldest first, with their first number, the frame head, each
        slot's push time and the remembered ``next_obs`` stacks: with the columns, the exact state."""
        if self.frames is None:
            return {}
        first = max(0, self.frame_head - self.frame_capacity)
        numbers = np.arange(first, self.frame_head)
        tails = np.array(list(self._tails.values()), dtype=np.int64).reshape(-1, self.frame_stack)
        return {"frames": self.frames[numbers % self.frame_capacity], "frame_first": np.array([first]),
                "frame_head": np.array([self.frame_head]), "frame_stack": np.array([self.frame_stack]),
                "pushed_at": self._pushed_at.copy(), "tails": tails}

    def load_extra_state(self, state: Mapping[str, npt.NDArray[np.generic]]) -> None:
        """Inverse of :meth:`extra_state` for a storage of the same capacity and ``frame_stack`` (after
        its columns are restored: the ring position is left as it is)."""
        self.frames, self._buckets, self._dropped = None, {}, []
        if not state:
            self.frame_head, self._tails = 0, {}
            return
        k, pushed = _scalar(state["frame_stack"]), np.asarray(state["pushed_at"])
        if k != self.frame_stack or len(pushed) != self.capacity:
            raise ValueError(f"saved frame state has frame_stack={k} and capacity {len(pushed)}; this buffer has "
                             f"frame_stack={self.frame_stack} and capacity {self.capacity}")
        saved = np.asarray(state["frames"])
        first, head = _scalar(state["frame_first"]), _scalar(state["frame_head"])
        self.frames = np.zeros((self.frame_capacity, *saved.shape[1:]), dtype=saved.dtype)
        numbers = np.arange(first, head)[-self.frame_capacity:]
        self.frames[numbers % self.frame_capacity] = saved[-len(numbers):] if len(numbers) else saved[:0]
        self.frame_head = head
        self._pushed_at[:] = pushed
        self._tails = {}
        for refs in np.asarray(state["tails"], dtype=np.int64).reshape(-1, k):  # (oldest first, as written)
            self._remember_tail(self._key(self.frames[refs[-1] % self.frame_capacity]), refs)
        for n in range(max(0, head - self.reuse_horizon), head):  # what _frame_number may match, oldest first
            self._buckets.setdefault(self._key(self.frames[n % self.frame_capacity]), []).append(n)


def _scalar(value: npt.NDArray[np.generic]) -> int:
    """A saved integer (an array of one)."""
    return int(np.asarray(value).reshape(-1)[0])


def expanded_chunks(columns: Mapping[str, np.ndarray], extra: Mapping[str, np.ndarray],
                    chunk: int = 4096) -> Iterator[Dict[str, np.ndarray]]:
    """Rows saved by a frame storage (``numeric_state`` + ``extra_state``) as full stacks, ``chunk``
    rows at a time (what any storage loads: a frame storage stores them once again, by content)."""
    n = len(next(iter(columns.values()))) if columns else 0
    frames = extra.get("frames")
    first = _scalar(extra["frame_first"]) if frames is not None else 0
    for lo in range(0, n, chunk):
        part = {k: v[lo:lo + chunk] for k, v in columns.items()}
        if frames is not None:
            for key in STACKED:
                if key in part:
                    part[key] = frames.take(part[key] - first, axis=0)
        yield part


def column_storage(capacity: int, frame_stack: int) -> ColumnStorage:
    """The in-memory storage a buffer's config asks for: ``frame_stack`` 0 a plain
    :class:`ColumnStorage`, ``k >= 2`` a :class:`FrameStackStorage` of ``k``-frame stacks."""
    if frame_stack == 0:
        return ColumnStorage(capacity)
    if frame_stack < 2:
        raise ConfigError(f"replay_buffer.frame_stack={frame_stack} is not valid; valid choices: 0 (store obs as "
                          "they are) or the stack depth k >= 2 of obs shaped (k, ...)")
    return FrameStackStorage(capacity, frame_stack)
