"""The seeds' list-of-dicts sample and the column batch, gathered straight from a storage's columns.

``NaiveReplayBuffer.sample`` / ``AdvancedReplayBuffer.sample`` return one plain ``dict`` per item
(the seeds' contract: ``default_collate`` stacks them back into a batch). Building them is most of
the cost of a list-of-dicts sample, so it is done column-wise with the fewest Python operations
per item, by a function compiled once per layout (key set and column kinds) and bound to the
storage's column arrays (rebound whenever the storage replaces a column):

* every field is gathered once for the whole batch (one ``take`` per column, inside the compiled
  function: no dict of gathered columns in between);
* a 1-D column whose dtype round-trips through Python (float32, int64, bool) becomes Python
  scalars with one ``tolist()`` (``default_collate`` turns them back into the same dtypes); other
  columns are iterated: array fields give row views of the gathered copy (one copy per batch, so
  an item's array never aliases the buffer or another item's row), other scalars NumPy scalars;
* the items come out of one list comprehension whose dict display has the keys as constants
  (``BUILD_CONST_KEY_MAP``; ~2x faster than ``dict(zip(keys, row))``).

Per item that is one dict display plus one row view per array field (~0.3 us in all). What is
left is CPython's own cost: a 7-key dict ~0.12 us, a row view ~0.06 us.

Why code is compiled from a template here, against issue 14's "plain code": a dict display with
constant keys is the only way CPython builds a dict without a per-key call, and the keys are known
only at run time. Plain-code builders were measured (``benchmarks/buffers/ab.py`` against df2a3b7,
2026-11-25): copies of a template dict filled column by column cost +19% on ``sample64`` (naive
and advanced) and +12% on ``sample256``; ``dict(zip(keys, row))`` ~+75%; a display with the keys in
closure variables ~+20%. That breaks the 10% bound on the replay figures, so the template stays,
confined to these two factories (keys enter as ``repr`` literals: nothing from the data runs).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple, cast

import numpy as np
import numpy.typing as npt

# 1-D dtypes whose .tolist() values default_collate stacks back into the same dtype
_PY_SCALAR_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.bool_)})

ROWS, PYLIST, ITER = 0, 1, 2  # how a column enters an item: array rows, Python scalars, NumPy scalars / objects

ItemBuilder = Callable[..., List[Dict[str, object]]]  # build(slots, *extra_lists)
ColumnGatherer = Callable[[npt.NDArray[np.int64]], Dict[str, npt.NDArray[np.generic]]]


def column_kind(col: npt.NDArray[np.generic]) -> int:
    """How a stored column (``array[capacity, ...]``) enters sampled items."""
    if col.ndim > 1:
        return ROWS
    return PYLIST if col.dtype in _PY_SCALAR_DTYPES else ITER


@functools.lru_cache(maxsize=64)
def _item_factory(keys: Tuple[Any, ...], kinds: Tuple[int, ...], n_extra: int) -> Callable[..., ItemBuilder]:
    """Compiled once per layout: ``make(c_0, ..., c_n-1) -> build(slots, e_0, ..., e_m-1)`` returning
    ``[{keys[0]: row_0, ...}, ...]`` for the ``n`` stored columns plus ``m`` extra lists.

    String keys enter the source as their ``repr`` (a literal that evaluates back to the same string
    whatever it holds, so no key can inject code); other keys take ``dict(zip(keys, row))``."""
    n = len(kinds)
    gather = {ROWS: "c{i}.take(s, axis=0)", PYLIST: "c{i}.take(s).tolist()", ITER: "c{i}.take(s)"}
    sources = [gather[k].format(i=i) for i, k in enumerate(kinds)] + [f"e{j}" for j in range(n_extra)]
    cols = ", ".join(f"c{i}" for i in range(n)) or "*_"
    extras = "".join(f", e{j}" for j in range(n_extra))
    names = ", ".join(f"v{i}" for i in range(len(keys))) + ("," if len(keys) == 1 else "")
    namespace: Dict[str, Any] = {"fields": tuple(keys)}
    if all(type(k) is str for k in keys):
        body = ", ".join(f"{k!r}: v{i}" for i, k in enumerate(keys))
        expr = f"[{{{body}}} for {names} in zip({', '.join(sources)})]"
    else:
        expr = f"[dict(zip(fields, row)) for row in zip({', '.join(sources)})]"
    src = f"def make({cols}):\n    def build(s{extras}):\n        return {expr}\n    return build\n"
    exec(src, namespace)  # noqa: S102
    return cast(Callable[..., ItemBuilder], namespace["make"])


def item_builder(columns: Mapping[str, npt.NDArray[np.generic]], extra_keys: Sequence[str] = ()) -> ItemBuilder:
    """``build(slots, *extra_values) -> list of dicts`` over the stored ``columns`` (bound now: build a
    new one when a column array is replaced), plus ``extra_keys`` whose per-item values are given as
    lists (ids, slots, IS weights)."""
    kinds = tuple(column_kind(c) for c in columns.values())
    make = _item_factory((*columns, *extra_keys), kinds, len(extra_keys))
    return make(*columns.values())


@functools.lru_cache(maxsize=64)
def _column_factory(keys: Tuple[Any, ...], kinds: Tuple[int, ...]) -> Callable[..., ColumnGatherer]:
    """Compiled once per layout: ``make(c_0, ...) -> gather(slots)`` returning ``{key: c_i.take(slots)}``
    as one dict display (string keys) or a dict built from a tuple of takes (other keys)."""
    takes = [f"c{i}.take(s, axis=0)" if k == ROWS else f"c{i}.take(s)" for i, k in enumerate(kinds)]
    cols = ", ".join(f"c{i}" for i in range(len(kinds))) or "*_"
    namespace: Dict[str, Any] = {"fields": tuple(keys)}
    if all(type(k) is str for k in keys):
        expr = "{" + ", ".join(f"{k!r}: {t}" for k, t in zip(keys, takes)) + "}"
    else:
        expr = f"dict(zip(fields, ({', '.join(takes)}{',' if len(takes) == 1 else ''})))"
    exec(f"def make({cols}):\n    def gather(s):\n        return {expr}\n    return gather\n", namespace)  # noqa: S102
    return cast(Callable[..., ColumnGatherer], namespace["make"])


def column_gatherer(columns: Mapping[str, npt.NDArray[np.generic]]) -> ColumnGatherer:
    """``gather(slots) -> {field: array[len(slots), ...]}`` (copies) over the stored ``columns``
    (bound now, like :func:`item_builder`)."""
    make = _column_factory(tuple(columns), tuple(column_kind(c) for c in columns.values()))
    return make(*columns.values())
