"""``FileStorage``: replay items whose payload lives in files (one ``.npz`` each, no pickle);
only paths and metadata stay in memory. Evicting an item deletes its file; ``clear()`` and
``close()`` leave nothing behind (DI-engine's "big data" mode, without its file leaks)."""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from typing import Any, Dict, List, Mapping, Optional, Sequence

import numpy as np
import numpy.typing as npt

from .storage import as_array

Slots = npt.NDArray[np.int64]


# ================================================================================ file storage
class FileStorage:
    """A ring of ``capacity`` slots whose payloads live in files (``<folder>/<name>.npz``, no pickle).

    Only the file path of each slot stays in memory. Overwriting or freeing a slot deletes its
    file; :meth:`clear` deletes every file and :meth:`close` also removes the folder, which is a
    fresh ``stride_buffer_*`` directory created under ``root`` (the system temp dir by default) so
    two buffers never share file names. The folder is also removed if the buffer is garbage
    collected or the interpreter exits without ``close()``.
    """

    def __init__(self, capacity: int, root: Optional[str] = None) -> None:
        if capacity < 1:
            raise ValueError(f"replay buffer capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        if root:
            os.makedirs(root, exist_ok=True)
        self.folder = tempfile.mkdtemp(prefix="stride_buffer_", dir=root or None)
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.folder, True)
        self.paths = np.empty(self.capacity, dtype=object)  # None = no file
        self.tail = 0
        self.size = 0
        self.fields: Optional[List[str]] = None

    def _write(self, slot: int, name: str, item: Mapping[str, Any]) -> None:
        arrays = {}
        for k, v in item.items():
            arr = as_array(v) if v is not None else np.asarray(v, dtype=object)
            if arr.dtype == object:
                raise ValueError(f"field '{k}' holds a Python object; file storage needs numeric arrays (no pickle)")
            arrays[k] = arr
        path = os.path.join(self.folder, f"{name}.npz")
        with open(path, "wb") as f:
            np.savez(f, allow_pickle=False, **arrays)
        self.paths[slot] = path

    def append(self, items: Sequence[Mapping[str, object]], names: Optional[Sequence[object]] = None) -> Slots:
        """Write items (the newest ``capacity`` of them) to the next ring slots; returns the slots.
        ``names``: the files' names (default: the slot numbers, unique since a slot's file is
        deleted before it is written again)."""
        if not items:
            return np.empty(0, dtype=np.int64)
        if names is None:
            names = ((self.tail + np.arange(len(items))) % self.capacity).tolist()
        if self.fields is None:
            self.fields = list(items[0].keys())
        if len(items) > self.capacity:
            items, names = items[-self.capacity:], list(names)[-self.capacity:]
        n = len(items)
        slots = (self.tail + np.arange(n)) % self.capacity
        self.free(slots)
        for slot, name, item in zip(slots.tolist(), names, items):
            if set(item.keys()) != set(self.fields):
                raise ValueError(f"item fields {sorted(item)} differ from the buffer's {sorted(self.fields)}")
            self._write(slot, str(name), item)
        self.tail = int((self.tail + n) % self.capacity)
        self.size = min(self.size + n, self.capacity)
        return slots

    def append_one(self, item: Mapping[str, object], name: object = None) -> int:
        """:meth:`append` for one item; returns its slot."""
        return int(self.append([item], None if name is None else [name])[0])

    def append_columns(self, columns: Mapping[str, npt.NDArray[np.generic]], names: Optional[Sequence[object]] = None) -> Slots:
        n = len(next(iter(columns.values())))
        items = [{k: v[i] for k, v in columns.items()} for i in range(n)]
        return self.append(items, names)

    def write_at(self, slots: Slots, columns: Mapping[str, npt.NDArray[np.generic]], names: Optional[Sequence[object]] = None) -> None:
        """Write column rows to given slots (used to restore a saved layout; default names: the slots)."""
        if self.fields is None and columns:
            self.fields = list(columns.keys())
        slot_list = np.asarray(slots).tolist()
        for i, (slot, name) in enumerate(zip(slot_list, slot_list if names is None else names)):
            self._write(slot, str(name), {k: v[i] for k, v in columns.items()})

    def free(self, slots: np.ndarray) -> None:
        """Delete the files of ``slots`` (those that have one)."""
        for slot in np.asarray(slots).tolist():
            path = self.paths[slot]
            if path is not None:
                try:
                    os.remove(path)
                except FileNotFoundError:
                    pass
                self.paths[slot] = None

    def get_items(self, slots: Slots, extra_keys: Sequence[str] = (),
                  extra_values: Sequence[Sequence[object]] = ()) -> List[Dict[str, object]]:
        """One dict per slot (read from its file), plus ``extra_keys`` with per-item values in lists."""
        out = []
        for slot in np.asarray(slots).tolist():
            with np.load(self.paths[slot], allow_pickle=False) as f:
                out.append({k: (f[k][()] if f[k].ndim == 0 else f[k]) for k in f.files})
        for key, values in zip(extra_keys, extra_values):
            for item, value in zip(out, values):
                item[key] = value
        return out

    def get_columns(self, slots: np.ndarray, keys: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
        items = self.get_items(slots)
        names = (self.fields or []) if keys is None else keys
        if not items:
            return {k: np.empty(0) for k in names}
        return {k: np.stack([np.asarray(it[k]) for it in items]) for k in names}

    @property
    def span(self) -> int:
        """Slots ``0..span-1`` hold every item (the ring only evicts by overwriting)."""
        return self.size

    def pop_dropped(self) -> Slots:
        """Nothing leaves this ring early (see :meth:`ColumnStorage.pop_dropped`)."""
        return np.empty(0, dtype=np.int64)

    def stored_columns(self, slots: np.ndarray) -> Dict[str, np.ndarray]:
        """The rows as stored: what samples see."""
        return self.get_columns(slots)

    def extra_state(self) -> Dict[str, npt.NDArray[np.generic]]:
        """Nothing is kept beside the items."""
        return {}

    def load_extra_state(self, state: Mapping[str, npt.NDArray[np.generic]]) -> None:
        """Inverse of :meth:`extra_state`."""
        if state:
            raise ValueError(f"the saved buffer kept frames apart ({sorted(state)}); file storage keeps none")

    def clear(self) -> None:
        self.free(np.arange(self.capacity))
        self.tail = 0
        self.size = 0

    def reset_layout(self) -> None:
        self.clear()
        self.fields = None

    def close(self) -> None:
        self.clear()
        self._finalizer()  # removes the folder (once)

    def files(self) -> List[str]:
        """Files currently in the folder (for checks)."""
        return sorted(os.listdir(self.folder)) if os.path.isdir(self.folder) else []



