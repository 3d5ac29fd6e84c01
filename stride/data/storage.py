"""Preallocated column storage: one array per field, written as a ring, read by index.

Replay data of fixed shape lives in one NumPy array per field (allocated on the first push from
the item's structure), so a sampled batch is one fancy-index per field -- no Python object per
item (DI-engine keeps a list of dicts and deep-copies them). A field whose values are dicts of
arrays (PettingZoo's ``{'observation', 'action_mask'}`` observations) is stored as one column per
key, named ``field/key``, and read back as a dict -- every read and write path, checkpoints too,
goes through the same columns. Fields whose values have no fixed numeric shape fall back to an
object column.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple, TypedDict

import numpy as np
import numpy.typing as npt
import torch

from .items import column_gatherer, item_builder

_NUMERIC = (np.ndarray, np.generic, float, int)  # bool is an int
_SUB = "/"  # joins a dict field's name and its key into a column name: 'obs/action_mask'


def _array_dict(value: object) -> bool:
    """A dict of arrays (stored as one column per key), not a dict of metadata (an object column)."""
    return isinstance(value, dict) and bool(value) and all(isinstance(v, (np.ndarray, torch.Tensor)) for v in value.values())


def flatten_fields(item: Mapping[str, Any], fields: Optional[Collection[str]] = None) -> Dict[str, Any]:
    """The dict-valued ``fields`` (None: every dict of arrays) of an item, or of a dict of columns,
    as ``field/key`` entries."""
    out: Dict[str, Any] = {}
    for key, value in item.items():
        if isinstance(value, dict) and (key in fields if fields is not None else _array_dict(value)):
            for sub, v in value.items():
                out[f"{key}{_SUB}{sub}"] = v
        else:
            out[key] = value
    return out


def nest_fields(flat: Mapping[str, Any]) -> Dict[str, Any]:
    """The inverse of :func:`flatten_fields`."""
    out: Dict[str, Any] = {}
    for key, value in flat.items():
        field, sep, sub = key.partition(_SUB)
        if sep:
            out.setdefault(field, {})[sub] = value
        else:
            out[key] = value
    return out


def as_array(value: object) -> npt.NDArray[np.generic]:
    """A stored value as an array: tensors to NumPy, float64 to float32 (the storage's float type)."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    arr = np.asarray(value)
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    return arr


class PhysicalState(TypedDict):
    """:meth:`ColumnStorage.physical_state`: the rows ``0..span-1`` in slot order, the write position
    and the number of occupied slots (``span`` but for a frame storage that evicted early)."""

    columns: Dict[str, npt.NDArray[np.generic]]
    tail: int
    size: int


class ColumnStorage:
    """Fixed-capacity ring of items (dicts with the same keys), stored column-wise.

    Its interface is :class:`~stride.data.file_storage.FileStorage`'s: the ``names`` arguments
    (the file storage's file names) are accepted and ignored, ``free`` has nothing to delete."""

    folder: Optional[str] = None  # (items live in memory)

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"replay buffer capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        self._columns: Dict[str, np.ndarray] = {}
        self._builders: Dict[Tuple[str, ...], Callable[..., List[Dict[str, Any]]]] = {}  # get_items, per layout
        self._gather: Optional[Callable[[np.ndarray], Dict[str, np.ndarray]]] = None  # get_columns, per layout
        self._specs: Optional[List[Tuple[str, int, Any]]] = None  # append_one's fast checks, per layout
        self._nested: FrozenSet[str] = frozenset()  # the dict fields stored as field/key columns
        self.tail = 0  # next slot to write
        self.size = 0  # occupied slots: the ring positions tail - size .. tail - 1
        self._no_slots = np.empty(0, dtype=np.int64)

    # ---- ring --------------------------------------------------------------------------------
    @property
    def start(self) -> int:
        """The oldest occupied slot (0 while the ring has not wrapped and nothing was evicted early)."""
        return (self.tail - self.size) % self.capacity

    @property
    def span(self) -> int:
        """Slots ``0..span-1`` hold every occupied slot: ``size`` for a ring that only ever evicts by
        overwriting; larger after a :class:`~stride.data.frame_storage.FrameStackStorage` evicted its
        oldest items early (its occupied slots no longer start at 0)."""
        return self.tail if self.size <= self.tail else self.capacity  # (the occupied run wraps round: all)

    @property
    def nbytes(self) -> int:
        """Bytes of the preallocated arrays (the whole capacity; object columns count their pointers)."""
        return sum(c.nbytes for c in self._columns.values())

    def pop_dropped(self) -> npt.NDArray[np.int64]:
        """Slots whose items left the ring early since the last call (a plain ring has none: it only
        overwrites the oldest item when it writes a new one)."""
        return self._no_slots

    # ---- layout ------------------------------------------------------------------------------
    @property
    def columns(self) -> Dict[str, np.ndarray]:
        """``{field: array[capacity, ...]}`` (replace it as a whole, never a column in place)."""
        return self._columns

    @columns.setter
    def columns(self, value: Dict[str, np.ndarray]) -> None:
        self._columns = value
        self._layout_changed()

    def _layout_changed(self) -> None:
        """Drop what is compiled for / bound to the current column arrays."""
        self._builders = {}
        self._gather = None
        self._specs = None
        self._nested = frozenset(k.partition(_SUB)[0] for k in self._columns if _SUB in k)

    def _allocate(self, item: Mapping[str, Any]) -> None:
        for key, value in flatten_fields(item).items():
            arr = as_array(value) if value is not None and not isinstance(value, (str, dict, list)) else None
            if arr is None or arr.dtype == object:
                self._columns[key] = np.empty(self.capacity, dtype=object)
            else:
                self._columns[key] = np.zeros((self.capacity, *arr.shape), dtype=arr.dtype)
        self._layout_changed()

    def _column_values(self, key: str, values: Sequence[Any]) -> np.ndarray:
        col = self._columns[key]
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
            arr = np.stack([as_array(v) for v in values]) if len(values) > 1 else as_array(values[0])[None]
        if arr.shape[1:] != col.shape[1:]:
            raise ValueError(f"field '{key}' has shape {arr.shape[1:]} but the buffer stores {col.shape[1:]}")
        return self._fit(key, arr)

    def _fit(self, key: str, arr: np.ndarray) -> np.ndarray:
        """Never change a value silently: floats arriving in an integer column promote the column;
        integers that don't fit an integer column's range are refused."""
        col = self._columns[key]
        if arr.dtype == col.dtype or np.can_cast(arr.dtype, col.dtype, "safe"):
            return arr
        if col.dtype.kind in "iub" and arr.dtype.kind == "f":
            self._columns[key] = col.astype(np.float32 if col.dtype.itemsize <= 2 else np.float64)
            self._layout_changed()
            return arr
        if col.dtype.kind in "iu" and arr.dtype.kind in "iub" and arr.size:
            info = np.iinfo(col.dtype)
            if arr.min() < info.min or arr.max() > info.max:
                raise ValueError(f"field '{key}' holds values outside its stored dtype {col.dtype} "
                                 f"[{info.min}, {info.max}]: min {arr.min()}, max {arr.max()}")
        return arr

    # ---- write -------------------------------------------------------------------------------
    def append(self, items: Sequence[Mapping[str, object]], names: Optional[Sequence[object]] = None) -> npt.NDArray[np.int64]:
        """Write items (oldest overwritten when full); returns the slots written, in order.

        Every field is converted and checked before anything is written, so a refused batch
        leaves the storage unchanged."""
        if not items:
            return np.empty(0, dtype=np.int64)
        if not self._columns:
            self._allocate(items[0])
        if self._nested:
            items = [flatten_fields(it, self._nested) for it in items]
        if len(items) > self.capacity:  # only the newest `capacity` items can survive
            items = items[-self.capacity:]
        keys = list(self._columns.keys())
        first = items[0]
        if set(first.keys()) != set(keys):
            missing, extra = set(keys) - set(first), set(first) - set(keys)
            raise ValueError(f"item fields differ from the buffer's: missing {sorted(missing)}, unexpected {sorted(extra)}")
        values = {key: self._column_values(key, [it[key] for it in items]) for key in keys}
        n = len(items)
        slots = (self.tail + np.arange(n)) % self.capacity
        where = slice(self.tail, self.tail + n) if self.tail + n <= self.capacity else slots
        for key in keys:
            self._columns[key][where] = values[key]
        self.tail = int((self.tail + n) % self.capacity)
        self.size = min(self.size + n, self.capacity)
        return slots

    def _fast_specs(self) -> List[Tuple[str, int, Any]]:
        """Per field: ``(key, kind, what)`` for :meth:`append_one`: kind 0 = array rows of shape and
        dtype ``what``, 1 = float32 scalars, 2 = int64 scalars, 3 = bool scalars, 4 = anything else."""
        specs: List[Tuple[str, int, Any]] = []
        for key, col in self._columns.items():
            dt = col.dtype
            if col.ndim > 1 and dt != object and dt != np.float64:  # (append rounds float64 through float32)
                specs.append((key, 0, (col.shape[1:], dt)))
            elif col.ndim == 1 and dt == np.float32:  # (append rounds any float through float32)
                specs.append((key, 1, (float, np.float32, np.float64)))
            elif col.ndim == 1 and dt == np.int64:
                specs.append((key, 2, (np.int64,)))
            elif col.ndim == 1 and dt == np.bool_:
                specs.append((key, 3, (bool, np.bool_)))
            else:
                specs.append((key, 4, ()))
        self._specs = specs
        return specs

    def append_one(self, item: Mapping[str, object], name: object = None) -> int:
        """:meth:`append` for one item; returns its slot (same effects, same errors).

        The collector's one-at-a-time push: a value that already has its column's dtype and shape
        (an ndarray row, a Python / NumPy scalar of the column's kind) is written as it is; any other
        value takes :meth:`append`'s checked conversion. Every field is checked before anything is
        written. ~2x faster than ``append([item])`` (no per-field temporary arrays)."""
        if not self._columns:
            self._allocate(item)
        if self._nested:
            item = flatten_fields(item, self._nested)
        specs = self._specs if self._specs is not None else self._fast_specs()
        if len(item) != len(specs):
            return int(self.append([item])[0])  # raises the field-mismatch error
        values = []
        for key, kind, what in specs:
            try:
                v: Any = item[key]  # (checked below by its exact type: the fast path must not pay isinstance)
            except KeyError:
                return int(self.append([item])[0])  # raises the field-mismatch error
            t = type(v)
            if kind == 0:
                if t is np.ndarray and v.shape == what[0] and v.dtype == what[1]:
                    values.append(v)
                    continue
            elif t in what or (kind == 2 and t is int and -(1 << 63) <= v < (1 << 63)):
                values.append(v)
                continue
            values.append(self._column_values(key, [v])[0])  # checked (may promote the column)
        slot = self.tail
        for col, v in zip(self._columns.values(), values):
            col[slot] = v
        self.tail = (slot + 1) % self.capacity
        if self.size < self.capacity:
            self.size += 1
        return slot

    def append_columns(self, columns: Mapping[str, npt.NDArray[np.generic]],
                       names: Optional[Sequence[object]] = None) -> npt.NDArray[np.int64]:
        """Write a batch already in column form (fast path)."""
        columns = flatten_fields(columns, self._nested if self._columns else None)
        n = len(next(iter(columns.values())))
        if not self._columns:
            self._allocate({k: v[0] for k, v in columns.items()})
        if n > self.capacity:
            columns = {k: v[-self.capacity:] for k, v in columns.items()}
            n = self.capacity
        values = {k: self._fit(k, np.asarray(columns[k])) for k in self._columns}
        slots = (self.tail + np.arange(n)) % self.capacity
        for key, col in self._columns.items():
            col[slots] = values[key]
        self.tail = int((self.tail + n) % self.capacity)
        self.size = min(self.size + n, self.capacity)
        return slots

    # ---- read --------------------------------------------------------------------------------
    def get_columns(self, slots: np.ndarray, keys: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
        """One gather per field: ``{field: array[len(slots), ...]}`` (copies). ``take`` along axis 0
        is about twice as fast as fancy indexing for small batches, with the same result."""
        if keys is None:
            gather = self._gather
            if gather is None:
                gather = self._gather = column_gatherer(self._columns)
            return nest_fields(gather(slots)) if self._nested else gather(slots)
        if self._nested:
            return nest_fields({k: c.take(slots, axis=0) for k, c in self._columns.items() if k.partition(_SUB)[0] in keys})
        return {k: self._columns[k].take(slots, axis=0) for k in keys}

    def get_items(self, slots: np.ndarray, extra_keys: Tuple[str, ...] = (),
                  extra_values: Sequence[Sequence[object]] = ()) -> List[Dict[str, object]]:
        """The seeds' form: one dict per slot, plus ``extra_keys`` with per-item values in lists (see
        :mod:`stride.data.items`: array fields are rows of one gathered copy, float32 / int64 / bool
        scalars Python scalars, other scalars NumPy scalars). The item builder is cached per layout."""
        build = self._builders.get(extra_keys)
        if build is None:
            build = self._builders[extra_keys] = item_builder(self._columns, extra_keys)
        items = build(slots, *extra_values)
        return [nest_fields(it) for it in items] if self._nested else items

    def write_at(self, slots: npt.NDArray[np.int64], columns: Mapping[str, npt.NDArray[np.generic]],
                 names: Optional[Sequence[object]] = None) -> None:
        """Write column rows at given slots (restoring a saved layout: the ring position is set apart)."""
        if not columns:
            return
        columns = flatten_fields(columns, self._nested if self._columns else None)
        if not self._columns:
            self._allocate({k: v[0] for k, v in columns.items()})
        for key, value in columns.items():
            arr = self._fit(key, np.asarray(value))  # (may promote the column: read it after)
            self._columns[key][slots] = arr

    def free(self, slots: npt.NDArray[np.int64]) -> None:
        """Nothing to delete: the ring reuses the rows."""

    def reset_layout(self) -> None:
        """Empty, and forget the fields (the next write allocates them anew)."""
        self.clear()
        self.columns = {}

    def close(self) -> None:
        self.reset_layout()

    def valid_slots(self) -> np.ndarray:
        """Occupied slots, oldest first."""
        start = self.start
        if self.size < self.capacity and start == 0:
            return np.arange(self.size)
        return (start + np.arange(self.size)) % self.capacity

    def stored_columns(self, slots: np.ndarray) -> Dict[str, np.ndarray]:
        """The rows as stored (what checkpoints hold; :meth:`get_columns` is what samples see)."""
        return {k: c.take(slots, axis=0) for k, c in self._columns.items()}

    def extra_state(self) -> Dict[str, npt.NDArray[np.generic]]:
        """State kept beside the columns (none here; a frame storage's frames)."""
        return {}

    def load_extra_state(self, state: Mapping[str, npt.NDArray[np.generic]]) -> None:
        """Inverse of :meth:`extra_state`."""
        if state:
            raise ValueError(f"the saved buffer kept frames apart ({sorted(state)}: replay_buffer.frame_stack > 0); "
                             "this one has frame_stack=0")

    def clear(self) -> None:
        self.tail = 0
        self.size = 0
        for col in self._columns.values():
            if col.dtype == object:
                col[:] = None

    # ---- persistence (no pickle) -------------------------------------------------------------
    def physical_state(self) -> PhysicalState:
        """Rows ``0..span-1`` in slot order, the write position and the occupied count: restoring
        them reproduces sampling exactly."""
        bad = [k for k, c in self._columns.items() if c.dtype == object]
        if bad:
            raise ValueError(f"fields {bad} hold Python objects and cannot be saved without pickle")
        span = self.span
        return {"columns": {k: c[:span].copy() for k, c in self._columns.items()}, "tail": self.tail,
                "size": self.size}

    def load_physical_state(self, columns: Mapping[str, np.ndarray], tail: int, size: Optional[int] = None) -> None:
        """Inverse of :meth:`physical_state` (``size``: the rows given, if not said)."""
        self._columns = {}
        self.clear()
        if not columns:
            return
        n = len(next(iter(columns.values())))
        self._allocate({k: v[0] for k, v in columns.items()})
        for k, v in columns.items():
            self._columns[k][:n] = v
        self.size, self.tail = (n if size is None else int(size)), int(tail)

    def numeric_state(self) -> Dict[str, npt.NDArray[np.generic]]:
        """Occupied rows of numeric columns, oldest first, plus layout (object columns refused)."""
        bad = [k for k, c in self._columns.items() if c.dtype == object]
        if bad:
            raise ValueError(f"fields {bad} hold Python objects and cannot be saved without pickle")
        order = self.valid_slots()
        return {k: c[order] for k, c in self._columns.items()}
