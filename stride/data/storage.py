"""Preallocated column storage: one array per field, written as a ring, read by index.

Replay data of fixed shape lives in one NumPy array per field (allocated on the first push from
the item's structure), so a sampled batch is one fancy-index per field -- no Python object per
item (DI-engine keeps a list of dicts and deep-copies them). Fields whose values have no fixed
numeric shape fall back to an object column.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

import numpy as np
import torch


_NUMERIC = (np.ndarray, np.generic, float, int)  # bool is an int


def _as_array(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    arr = np.asarray(value)
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    return arr


class ColumnStorage:
    """Fixed-capacity ring of items (dicts with the same keys), stored column-wise."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"replay buffer capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        self.columns: Dict[str, np.ndarray] = {}
        self.tail = 0  # next slot to write
        self.size = 0

    # ---- layout ------------------------------------------------------------------------------
    def _allocate(self, item: Mapping[str, Any]) -> None:
        for key, value in item.items():
            arr = _as_array(value) if value is not None and not isinstance(value, (str, dict, list)) else None
            if arr is None or arr.dtype == object:
                self.columns[key] = np.empty(self.capacity, dtype=object)
            else:
                self.columns[key] = np.zeros((self.capacity, *arr.shape), dtype=arr.dtype)

    def _column_values(self, key: str, values: Sequence[Any]) -> np.ndarray:
        col = self.columns[key]
        if col.dtype == object:
            out = np.empty(len(values), dtype=object)
            for i, v in enumerate(values):
                out[i] = v
            return out
        arr = None
        if isinstance(values[0], _NUMERIC):  # one C call for the whole column (the common case)
            try:
                arr = np.array(values)
            except ValueError:  # ragged: the slow path below names the bad shape
                arr = None
            if arr is not None and arr.dtype == object:
                arr = None
            elif arr is not None and arr.dtype == np.float64:
                arr = arr.astype(np.float32)
        if arr is None:
            arr = np.stack([_as_array(v) for v in values]) if len(values) > 1 else _as_array(values[0])[None]
        if arr.shape[1:] != col.shape[1:]:
            raise ValueError(f"field '{key}' has shape {arr.shape[1:]} but the buffer stores {col.shape[1:]}")
        return self._fit(key, arr)

    def _fit(self, key: str, arr: np.ndarray) -> np.ndarray:
        """Never change a value silently: floats arriving in an integer column promote the column;
        integers that don't fit an integer column's range are refused."""
        col = self.columns[key]
        if arr.dtype == col.dtype or np.can_cast(arr.dtype, col.dtype, "safe"):
            return arr
        if col.dtype.kind in "iub" and arr.dtype.kind == "f":
            self.columns[key] = col.astype(np.float32 if col.dtype.itemsize <= 2 else np.float64)
            return arr
        if col.dtype.kind in "iu" and arr.dtype.kind in "iub" and arr.size:
            info = np.iinfo(col.dtype)
            if arr.min() < info.min or arr.max() > info.max:
                raise ValueError(f"field '{key}' holds values outside its stored dtype {col.dtype} "
                                 f"[{info.min}, {info.max}]: min {arr.min()}, max {arr.max()}")
        return arr

    # ---- write -------------------------------------------------------------------------------
    def append(self, items: List[Mapping[str, Any]]) -> np.ndarray:
        """Write items (oldest overwritten when full); returns the slots written, in order.

        Every field is converted and checked before anything is written, so a refused batch
        leaves the storage unchanged."""
        if not items:
            return np.empty(0, dtype=np.int64)
        if not self.columns:
            self._allocate(items[0])
        if len(items) > self.capacity:  # only the newest `capacity` items can survive
            items = items[-self.capacity:]
        keys = list(self.columns.keys())
        first = items[0]
        if set(first.keys()) != set(keys):
            missing, extra = set(keys) - set(first), set(first) - set(keys)
            raise ValueError(f"item fields differ from the buffer's: missing {sorted(missing)}, unexpected {sorted(extra)}")
        values = {key: self._column_values(key, [it[key] for it in items]) for key in keys}
        n = len(items)
        slots = (self.tail + np.arange(n)) % self.capacity
        where = slice(self.tail, self.tail + n) if self.tail + n <= self.capacity else slots
        for key in keys:
            self.columns[key][where] = values[key]
        self.tail = int((self.tail + n) % self.capacity)
        self.size = min(self.size + n, self.capacity)
        return slots

    def append_columns(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """Write a batch already in column form (fast path)."""
        n = len(next(iter(columns.values())))
        if not self.columns:
            self._allocate({k: v[0] for k, v in columns.items()})
        if n > self.capacity:
            columns = {k: v[-self.capacity:] for k, v in columns.items()}
            n = self.capacity
        values = {k: self._fit(k, np.asarray(columns[k])) for k in self.columns}
        slots = (self.tail + np.arange(n)) % self.capacity
        for key, col in self.columns.items():
            col[slots] = values[key]
        self.tail = int((self.tail + n) % self.capacity)
        self.size = min(self.size + n, self.capacity)
        return slots

    # ---- read --------------------------------------------------------------------------------
    def get_columns(self, slots: np.ndarray, keys: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
        """One fancy-index per field: ``{field: array[len(slots), ...]}`` (copies)."""
        keys = self.columns.keys() if keys is None else keys
        return {k: self.columns[k][slots] for k in keys}

    def get_items(self, slots: np.ndarray) -> List[Dict[str, Any]]:
        """The seeds' form: one dict per slot (values are copies)."""
        cols = self.get_columns(slots)
        return [{k: v[i] for k, v in cols.items()} for i in range(len(slots))]

    def valid_slots(self) -> np.ndarray:
        """Occupied slots, oldest first."""
        if self.size < self.capacity:
            return np.arange(self.size)
        return (self.tail + np.arange(self.capacity)) % self.capacity

    def clear(self) -> None:
        self.tail = 0
        self.size = 0
        for col in self.columns.values():
            if col.dtype == object:
                col[:] = None

    # ---- persistence (no pickle) -------------------------------------------------------------
    def physical_state(self) -> Dict[str, Any]:
        """Occupied rows in slot order plus the write position: restoring it reproduces sampling exactly."""
        bad = [k for k, c in self.columns.items() if c.dtype == object]
        if bad:
            raise ValueError(f"fields {bad} hold Python objects and cannot be saved without pickle")
        return {"columns": {k: c[: self.size].copy() for k, c in self.columns.items()}, "tail": self.tail}

    def load_physical_state(self, columns: Mapping[str, np.ndarray], tail: int) -> None:
        """Inverse of :meth:`physical_state`."""
        self.columns = {}
        self.clear()
        if not columns:
            return
        n = len(next(iter(columns.values())))
        self._allocate({k: v[0] for k, v in columns.items()})
        for k, v in columns.items():
            self.columns[k][:n] = v
        self.size, self.tail = n, int(tail)

    def numeric_state(self) -> Dict[str, Any]:
        """Occupied rows of numeric columns, oldest first, plus layout (object columns refused)."""
        bad = [k for k, c in self.columns.items() if c.dtype == object]
        if bad:
            raise ValueError(f"fields {bad} hold Python objects and cannot be saved without pickle")
        order = self.valid_slots()
        return {k: c[order] for k, c in self.columns.items()}
