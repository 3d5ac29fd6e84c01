"""``NaiveReplayBuffer``: a FIFO ring of transitions sampled uniformly.

Stored in preallocated columns (``ColumnStorage``). Two ways out: the seeds' ``sample`` (a list of
dicts, built column-wise by :mod:`stride.data.items`: one ``take`` per field, one dict display per
item) and ``sample_batch`` (one array per field, no Python object per item), which the learner
uses: one draw of slots and one ``take`` per field, within a few percent of a bare NumPy ring.
A batch holds distinct items, every ``size``-subset of the stored items equally likely (DI-engine's
``np.random.choice(..., replace=False)``; here a few more i.i.d. draws than the batch and a
~0.4 us check for repeats, :meth:`~stride.data.draws.BatchLimit.uniform`); ``replace=True``
gives i.i.d. draws, the same as earlier versions.
A single pushed item is written field by field without temporary arrays (``append_one``). A push
longer than the capacity keeps the newest items (DI-engine over-counts there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union, cast

import numpy as np
import numpy.typing as npt
import torch

from ...config.config import Configurable
from ...config.view import ConfigView, setting
from ...utils.registry import BUFFER_REGISTRY
from ...utils.narrow import as_int, as_mapping, as_tensor, as_tensors
from ..npz import load_npz, save_npz
from ..draws import BatchLimit, read_only
from ..frame_storage import column_storage, expanded_chunks
from ..storage import ColumnStorage, PhysicalState
from .protocol import ReplayBuffer, Ticket

META_KEYS = ("replay_unique_id", "replay_buffer_idx")


@dataclass(frozen=True)
class NaiveBufferConfig(ConfigView):
    """``policy.other.replay_buffer`` of a :class:`NaiveReplayBuffer`."""

    #: the registered buffer name
    type: str = "naive"
    #: (int) capacity in items; the oldest are overwritten.
    replay_buffer_size: int = setting(10000, "[1, inf)")
    #: (int) sampling never starts before the buffer holds this many items (and a batch).
    min_sample_size: int = setting(0, "[0, inf)")
    #: (bool) False: a batch holds distinct items, every subset alike (None while fewer than its size are
    #: stored); True: i.i.d. draws (repeats possible).
    replace: bool = False
    #: (int) 0: store obs as they are; k >= 2: obs / next_obs are k-frame stacks (Atari's (4, 84, 84)) kept
    #: as references into a frame ring, each distinct frame once (stride.data.frame_storage).
    frame_stack: int = setting(0, "[0, inf)")


@BUFFER_REGISTRY.register("naive")
class NaiveReplayBuffer(Configurable):
    """FIFO replay buffer with uniform sampling."""

    config_view = NaiveBufferConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None, seed: Optional[int] = None, **_: object) -> None:
        self._cfg = c = self.typed_config(NaiveBufferConfig, cfg, prefix="policy.other.replay_buffer.")
        self._storage = column_storage(c.replay_buffer_size, c.frame_stack)
        self._may_drop = c.frame_stack > 0  # (only a frame storage lets items go early)
        self._rng = np.random.default_rng(seed)
        self._next_id = 0
        self._ids = np.full(self._storage.capacity, -1, dtype=np.int64)
        self._push_count = 0
        self._sample_count = 0
        self._replace = bool(c.replace)
        self._limit = BatchLimit(self._storage.capacity)

    # ---- write -------------------------------------------------------------------------------
    def push(self, data: Union[Mapping[str, object], Sequence[object]], cur_collector_envstep: int = -1) -> None:
        """Add one item or a list of items (dicts with the same fields)."""
        items = [data] if isinstance(data, dict) else list(cast(Sequence[Mapping[str, object]], data))
        if not items:
            return
        items = [{k: v for k, v in it.items() if k not in META_KEYS} for it in items] \
            if any(k in items[0] for k in META_KEYS) else items
        try:
            if len(items) == 1:  # one at a time: no per-call arrays
                slot = self._storage.append_one(items[0])
            else:
                slots = self._storage.append(items)
        finally:  # (also when an item was refused after a frame storage let older ones go)
            if self._may_drop:
                self._forget_dropped()
        if len(items) == 1:
            self._ids[slot] = self._next_id
            self._next_id += 1
            self._push_count += 1
            return
        self._on_write(slots, len(items))

    def _forget_dropped(self) -> None:
        """Items a frame storage let go early (their frames were needed) lose their ids; slots
        written since hold new items and get theirs next."""
        dropped = self._storage.pop_dropped()
        if dropped.size:
            self._ids[dropped] = -1

    def _on_write(self, slots: np.ndarray, n: int) -> None:
        first = self._next_id + n - len(slots)
        self._ids[slots] = np.arange(first, first + len(slots))
        self._next_id += n
        self._push_count += n

    # ---- read --------------------------------------------------------------------------------
    def _sample_slots(self, size: int) -> Optional[np.ndarray]:
        n = self._storage.size
        if n < size or n < self._cfg.min_sample_size:
            return None
        self._sample_count += size
        # occupied slots are 0..n-1 (the ring starts at 0 and only wraps when full), unless a frame
        # storage let its oldest items go early: then the n slots from its oldest one
        slots = self._limit.draw(self._rng, n, size, self._replace)
        start = self._storage.start
        if start and n < self._storage.capacity:
            slots = (slots + start) % self._storage.capacity
        return slots

    def sample(self, size: int, cur_learner_iter: int = -1) -> Optional[List[Dict[str, object]]]:
        """``size`` distinct items drawn uniformly (every ``size``-subset alike; i.i.d. draws with
        ``replace=True``), each a dict carrying ``replay_unique_id`` and ``replay_buffer_idx``; None
        while the buffer holds fewer than ``max(size, min_sample_size)`` items. Array fields are rows
        of one gathered copy (writing to them never touches the buffer)."""
        slots = self._sample_slots(size)
        if slots is None:
            return None
        # built column-wise (stride.data.items): one gather per field, one dict display per item
        return self._storage.get_items(slots, META_KEYS, (self._ids.take(slots).tolist(), slots.tolist()))

    def sample_batch(self, size: int, cur_learner_iter: int = -1
                     ) -> Optional[Tuple[Dict[str, np.ndarray], Ticket]]:
        """Like :meth:`sample` (the same draws: distinct items unless ``replace=True``) but as columns:
        ``({field: array[size, ...]}, ticket)``, the ids in the :class:`Ticket`, not in the batch."""
        slots = self._sample_slots(size)
        if slots is None:
            return None
        return self._storage.get_columns(slots), Ticket(self._ids.take(slots), slots)

    def update(self, ticket: Union[Ticket, Mapping[str, object], None], priorities: object = None) -> None:
        """Priorities are meaningless for uniform sampling: ignored."""

    def count(self) -> int:
        return self._storage.size

    def __len__(self) -> int:
        return self._storage.size

    def clear(self) -> None:
        self._storage.clear()
        self._ids[:] = -1

    def close(self) -> None:
        self.clear()

    @property
    def push_count(self) -> int:
        return self._push_count

    @property
    def storage(self) -> ColumnStorage:
        """Where the items' fields live (ring slots)."""
        return self._storage

    @property
    def unique_ids(self) -> npt.NDArray[np.int64]:
        """Per slot: the id of the item there (-1: empty), read-only."""
        return read_only(self._ids)

    @property
    def next_id(self) -> int:
        """The id the next pushed item gets."""
        return self._next_id

    # ---- persistence -------------------------------------------------------------------------
    def save_data(self, path: str) -> None:
        """Write the items (oldest first) and their ids to an ``.npz`` file, without pickle (a frame
        storage's ``obs`` / ``next_obs`` as frame numbers plus its frames: any buffer loads them)."""
        state = self._storage.numeric_state() if self._storage.size else {}
        order = self._storage.valid_slots()
        extra = {f"frame/{k}": v for k, v in self._storage.extra_state().items()} if self._storage.size else {}
        save_npz(path, state, {"replay_unique_id": self._ids[order], "next_id": self._next_id, **extra})

    def load_data(self, path: str) -> None:
        """Replace the contents with what :meth:`save_data` wrote (by any buffer, frames or not)."""
        cols, meta = load_npz(path)
        ids, next_id = meta["replay_unique_id"], int(meta["next_id"])
        self.clear()
        self._storage.reset_layout()
        extra = {k[6:]: v for k, v in meta.items() if k.startswith("frame/")}
        cols = {k: v[-self._storage.capacity:] for k, v in cols.items()}  # (only the newest can stay)
        written = [self._storage.append_columns(part) for part in expanded_chunks(cols, extra)]
        self._forget_dropped()
        if written:
            order = self._storage.valid_slots()  # the newest items that fit, oldest first
            self._ids[order] = ids[len(ids) - len(order):]
        self._next_id = next_id

    def state_dict(self) -> Dict[str, object]:
        """Contents (in slot order), ids and sampling RNG as tensors / plain values (for checkpoints)."""
        phys: PhysicalState = self._storage.physical_state() if self._storage.size else \
            {"columns": {}, "tail": 0, "size": 0}
        extra = self._storage.extra_state() if self._storage.size else {}
        return {
            "columns": {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in phys["columns"].items()},
            "tail": phys["tail"],
            "size": phys["size"],
            "frames": {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in extra.items()},
            "ids": torch.from_numpy(self._ids[: self._storage.span].copy()),
            "next_id": self._next_id,
            "rng": self._rng.bit_generator.state,
            "push_count": self._push_count,
        }

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        columns = as_tensors(state["columns"], "buffer state 'columns'")
        self._storage.load_physical_state({k: v.numpy() for k, v in columns.items()},
                                          as_int(state["tail"], "buffer state 'tail'"),
                                          as_int(state["size"], "buffer state 'size'") if "size" in state else None)
        frames = as_tensors(state.get("frames", {}), "buffer state 'frames'")
        self._storage.load_extra_state({k: v.numpy() for k, v in frames.items()})
        ids = as_tensor(state["ids"], "buffer state 'ids'")
        self._ids[:] = -1
        self._ids[: len(ids)] = ids.numpy()
        self._next_id = as_int(state["next_id"], "buffer state 'next_id'")
        self._rng.bit_generator.state = dict(as_mapping(state["rng"], "buffer state 'rng'"))
        self._push_count = as_int(state.get("push_count", 0), "buffer state 'push_count'")


def create_buffer(cfg: Mapping[str, object], seed: Optional[int] = None, **kwargs: object) -> ReplayBuffer:
    """Build the buffer named by ``cfg['type']`` (default ``'naive'``): any class registered in
    ``BUFFER_REGISTRY``, user buffers too; whichever it is, it must meet :class:`ReplayBuffer`."""
    name = str(cfg.get("type", "naive"))
    buffer = BUFFER_REGISTRY.get(name)(cfg, seed=seed, **kwargs)
    if not isinstance(buffer, ReplayBuffer):
        missing = [m for m in ("push", "sample_batch", "update", "count", "clear", "state_dict", "load_state_dict")
                   if not callable(getattr(buffer, m, None))]
        raise TypeError(f"buffer type '{name}' lacks the ReplayBuffer methods {missing}")
    return buffer
