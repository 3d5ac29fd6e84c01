"""Replay contents on disk without pickle: one ``.npz`` of ``col/<field>`` and ``meta/<name>`` arrays.

Shared by every buffer's ``save_data`` / ``load_data``. The file is written under a temporary name
and renamed into place, so a crash mid-write never leaves a half-written file at ``path``.
"""

from __future__ import annotations

from typing import Dict, Mapping, Tuple

import numpy as np

from ..utils.files import atomic_write


def save_npz(path: str, columns: Mapping[str, np.ndarray], meta: Mapping[str, object]) -> None:
    """Write ``columns`` and ``meta`` (arrays or scalars) to ``path`` atomically."""
    arrays = {f"col/{k}": v for k, v in columns.items()}
    arrays.update({f"meta/{k}": np.asarray(v) for k, v in meta.items()})
    atomic_write(path, lambda f: np.savez(f, allow_pickle=False, **arrays), binary=True)


def load_npz(path: str) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray]]:
    """``(columns, meta)`` as :func:`save_npz` wrote them (object arrays refused: no pickle)."""
    with np.load(path, allow_pickle=False) as f:
        columns = {k[4:]: f[k] for k in f.files if k.startswith("col/")}
        meta = {k[5:]: f[k] for k in f.files if k.startswith("meta/")}
    return columns, meta
