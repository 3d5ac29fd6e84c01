"""How an :class:`~.advanced.AdvancedReplayBuffer` is written down and read back: the ``.npz`` file
of ``save_data`` and the checkpoint of ``state_dict``.

``save_data``/``load_data`` use ``.npz`` without pickle and keep ids, priorities, use counts and
collect iterations (the live items oldest first: what a new buffer, maybe of another capacity or
storage type, loads -- the newest ``capacity`` items if more); ``state_dict``/``load_state_dict``
hold the live items at their slots plus the ring position, RNG, sampler bound, beta schedule,
monitor and limiter counters as tensors and plain values, so that a resumed run samples exactly
what an uninterrupted one would (checkpoints load with ``torch.load(weights_only=True)``). Each
part saves and restores its own state through its public methods; this module holds the two
formats (:class:`SavedItems`, :class:`BufferState`), each read back whole and checked -- a bad entry
is one line naming it -- before the buffer changes anything.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, NamedTuple, Optional, Union

import numpy as np
import numpy.typing as npt
import torch

from ...utils.narrow import as_float, as_int, as_mapping, as_numbers, as_tensor, as_tensors
from ..file_storage import FileStorage
from ..frame_storage import expanded_chunks
from ..npz import load_npz, save_npz
from ..storage import ColumnStorage

Slots = npt.NDArray[np.int64]
Columns = Dict[str, npt.NDArray[np.generic]]
Storage = Union[ColumnStorage, FileStorage]


def saveable_columns(storage: Storage, slots: Slots) -> Columns:
    """The rows at ``slots`` as stored (a frame storage's stacks as frame numbers: its frames go
    beside them); fields of Python objects are refused (no pickle)."""
    cols = storage.stored_columns(slots)
    bad = [k for k, c in cols.items() if c.dtype == object]
    if bad:
        raise ValueError(f"fields {bad} hold Python objects and cannot be saved without pickle")
    return cols


class SavedItems(NamedTuple):
    """What ``save_data`` wrote, as a buffer of ``capacity`` items loads it: the newest items that
    fit, oldest first, with their metadata."""

    columns: Columns
    frames: Columns  # a frame storage's frames (the stacks in ``columns`` refer to them)
    ids: Slots
    priority: npt.NDArray[np.float64]
    use_count: Slots
    collect_iter: Slots
    next_id: int
    max_priority: float


def save_items(path: str, storage: Storage, order: Slots, priority: npt.NDArray[np.float64], use_count: Slots,
               collect_iter: Slots, ids: Slots, next_id: int, max_priority: float) -> None:
    """Write the items at ``order`` (oldest first) of ``storage`` with their metadata to an ``.npz``
    file, without pickle."""
    extra = {f"frame/{k}": v for k, v in storage.extra_state().items()} if order.size else {}
    save_npz(path, saveable_columns(storage, order) if order.size else {},
             {"replay_unique_id": ids, "priority": priority, "use_count": use_count, "collect_iter": collect_iter,
              "next_id": next_id, "max_priority": max_priority, **extra})


def load_items(path: str, capacity: int) -> SavedItems:
    """What :func:`save_items` wrote, the newest ``capacity`` items of it."""
    cols, meta = load_npz(path)
    keep = min(len(meta["replay_unique_id"]), capacity)  # (0: nothing saved; [-0:] is everything, i.e. nothing)
    return SavedItems(columns={k: v[-keep:] for k, v in cols.items()},
                      frames={k[6:]: v for k, v in meta.items() if k.startswith("frame/")},
                      ids=meta["replay_unique_id"][-keep:], priority=meta["priority"][-keep:],
                      use_count=meta["use_count"][-keep:], collect_iter=meta["collect_iter"][-keep:],
                      next_id=int(meta["next_id"]), max_priority=float(meta["max_priority"]))


def write_items(storage: Storage, saved: SavedItems) -> Slots:
    """Append ``saved``'s items to an emptied ``storage`` (a frame file's stacks rebuilt, a chunk at
    a time); returns the slots of the newest ones it kept (a frame storage may keep fewer: FIFO)."""
    names, lo = saved.ids.tolist(), 0
    written: List[Slots] = []
    for part in expanded_chunks(saved.columns, saved.frames):
        n = len(next(iter(part.values())))
        written.append(storage.append_columns(part, names[lo:lo + n]))
        lo += n
    storage.pop_dropped()
    return np.concatenate(written)[len(saved.ids) - storage.size:]


class BufferState(NamedTuple):
    """A checkpoint of the buffer as NumPy arrays and plain values: the live items at their slots,
    the ring position, per-slot metadata and each part's state."""

    columns: Columns
    frames: Columns
    slots: Slots
    tail: int
    ring_size: int
    ids: Slots
    priority: npt.NDArray[np.float64]
    use_count: Slots
    collect_iter: Slots
    next_id: int
    max_priority: float
    sampler: Optional[Dict[str, float]]
    learner_iter: int
    rng: Mapping[str, object]
    monitor: Mapping[str, object]
    limiter: Optional[Dict[str, float]]


def _tensor(a: npt.NDArray[np.generic]) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


def to_checkpoint(state: BufferState) -> Dict[str, object]:
    """``state`` as ``state_dict`` returns it: tensors and plain values (``weights_only`` loads it)."""
    return {
        "columns": {k: _tensor(v) for k, v in state.columns.items()},
        "frames": {k: _tensor(np.asarray(v)) for k, v in state.frames.items()},
        "slots": _tensor(state.slots),
        "tail": state.tail,
        "ring_size": state.ring_size,
        "ids": _tensor(state.ids),
        "priority": _tensor(state.priority),
        "use_count": _tensor(state.use_count),
        "collect_iter": _tensor(state.collect_iter),
        "next_id": state.next_id,
        "max_priority": state.max_priority,
        "sampler": state.sampler,
        "learner_iter": state.learner_iter,
        "rng": state.rng,
        "monitor": state.monitor,
        "limiter": state.limiter,
    }


def from_checkpoint(state: Mapping[str, object]) -> BufferState:
    """What :func:`to_checkpoint` wrote, every entry checked (one line naming a bad one)."""
    def array(key: str) -> np.ndarray:
        return as_tensor(state[key], f"buffer state '{key}'").numpy()

    sampler, limiter = state.get("sampler"), state.get("limiter")
    return BufferState(
        columns={k: v.numpy() for k, v in as_tensors(state["columns"], "buffer state 'columns'").items()},
        frames={k: v.numpy() for k, v in as_tensors(state.get("frames", {}), "buffer state 'frames'").items()},
        slots=array("slots").astype(np.int64), tail=as_int(state["tail"], "buffer state 'tail'"),
        ring_size=as_int(state["ring_size"], "buffer state 'ring_size'"), ids=array("ids"),
        priority=array("priority"), use_count=array("use_count"), collect_iter=array("collect_iter"),
        next_id=as_int(state["next_id"], "buffer state 'next_id'"),
        max_priority=as_float(state["max_priority"], "buffer state 'max_priority'"),
        sampler=None if sampler is None else as_numbers(sampler, "buffer state 'sampler'"),
        learner_iter=as_int(state["learner_iter"], "buffer state 'learner_iter'"),
        rng=dict(as_mapping(state["rng"], "buffer state 'rng'")),
        monitor=as_mapping(state["monitor"], "buffer state 'monitor'"),
        limiter=None if limiter is None else as_numbers(limiter, "buffer state 'limiter'"))
