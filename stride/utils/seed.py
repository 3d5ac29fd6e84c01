"""Global RNG seeding and capture (for exact resume; every state is plain values or tensors)."""

from __future__ import annotations

import random
from typing import Tuple, TypedDict

import numpy as np
import torch

from .narrow import as_float, as_int, as_mapping


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


def read_rng_state(value: object) -> RngState:
    """A checkpoint's ``rng`` entry, checked to be what :func:`get_rng_state` writes (a
    ``TypeError`` naming the part that is not)."""
    state = as_mapping(value, "checkpoint 'rng'")
    numpy_state = as_mapping(state.get("numpy"), "checkpoint 'rng.numpy'")
    python, keys, torch_state = state.get("python"), numpy_state.get("keys"), state.get("torch")
    kind = numpy_state.get("kind")
    if not isinstance(python, (tuple, list)):
        raise TypeError(f"checkpoint 'rng.python' must be a tuple, got {type(python).__name__}")
    if not isinstance(keys, torch.Tensor) or not isinstance(torch_state, torch.Tensor):
        raise TypeError("checkpoint 'rng.numpy.keys' and 'rng.torch' must be tensors")
    if not isinstance(kind, str):
        raise TypeError(f"checkpoint 'rng.numpy.kind' must be a string, got {type(kind).__name__}")
    return {"python": tuple(python), "torch": torch_state,
            "numpy": {"kind": kind, "keys": keys, "pos": as_int(numpy_state.get("pos"), "checkpoint 'rng.numpy.pos'"),
                      "has_gauss": as_int(numpy_state.get("has_gauss"), "checkpoint 'rng.numpy.has_gauss'"),
                      "cached": as_float(numpy_state.get("cached"), "checkpoint 'rng.numpy.cached'")}}


def _tuplify(x: object) -> object:
    return tuple(_tuplify(v) for v in x) if isinstance(x, (list, tuple)) else x
