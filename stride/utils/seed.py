"""Global RNG seeding and capture (for exact resume; every state is plain values or tensors)."""

from __future__ import annotations

import random
from typing import Tuple, TypedDict

import numpy as np
import torch


def set_pkg_seed(seed: int, use_cuda: bool = False) -> None:
    """Seed Python's ``random``, NumPy's legacy global RNG and torch."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if use_cuda and torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


class NumpyRngState(TypedDict):
    """NumPy's legacy global RNG state (``np.random.get_state()``) with the key as a tensor."""

    kind: str
    keys: torch.Tensor
    pos: int
    has_gauss: int
    cached: float


class RngState(TypedDict):
    """The global RNG states a checkpoint holds."""

    python: Tuple[object, ...]
    numpy: NumpyRngState
    torch: torch.Tensor


def get_rng_state() -> RngState:
    """Global RNG states as tensors / plain values (loadable with ``weights_only=True``)."""
    legacy = np.random.get_state(legacy=True)
    if not isinstance(legacy, tuple):  # numpy returns a tuple for legacy=True
        raise TypeError(f"np.random.get_state(legacy=True) gave {type(legacy).__name__}")
    kind, keys, pos, has_gauss, cached = legacy
    return {
        "python": random.getstate(),
        "numpy": {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                  "has_gauss": int(has_gauss), "cached": float(cached)},
        "torch": torch.get_rng_state(),
    }


def set_rng_state(state: RngState) -> None:
    """Restore the states :func:`get_rng_state` captured (lists read back from JSON become tuples)."""
    random.setstate(tuple(_tuplify(v) for v in state["python"]))
    n = state["numpy"]
    np.random.set_state((n["kind"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"], n["cached"]))
    torch.set_rng_state(state["torch"])


def _tuplify(x: object) -> object:
    return tuple(_tuplify(v) for v in x) if isinstance(x, (list, tuple)) else x
