"""Observation slots in shared memory, one block per worker process.

A block holds, for each observation key, an array ``(envs_in_worker, *shape)`` of the space's dtype.
It lives in an anonymous ``memfd`` (Linux) whose descriptor is handed to the child over its pipe,
so no name ever appears in ``/dev/shm``: a SIGKILLed parent cannot leak a segment (DI-engine's
``multiprocessing.Array`` and Gymnasium's buffers are inherited by fork; ``SharedMemory`` names
leak on SIGKILL). Without ``os.memfd_create`` the managers fall back to sending obs through the pipe.
"""

from __future__ import annotations

import mmap
import os
from typing import Dict, List, Optional, Tuple, Union

import gymnasium as gym
import numpy as np
import numpy.typing as npt

_ALIGN = 64
LayoutEntry = Tuple[Optional[str], Tuple[int, ...], np.dtype[np.generic]]  # (Dict key or None, shape, dtype)
#: an observation as shared memory holds it: an array (a Box) or a dict of arrays (a Dict of Boxes)
ShmObs = Union[npt.NDArray[np.generic], Dict[str, npt.NDArray[np.generic]]]
_NUMERIC_KINDS = "biuf"  # bool, signed, unsigned, float


def shm_available() -> bool:
    """Whether this platform can create anonymous shared memory that a descriptor can carry."""
    return hasattr(os, "memfd_create")


def obs_layout(space: gym.spaces.Space[object]) -> Optional[List[LayoutEntry]]:
    """``[(key, shape, dtype), ...]`` for a fixed-shape numeric Box or Dict of Boxes; None otherwise.

    ``key`` is None for a plain Box observation.
    """
    if isinstance(space, gym.spaces.Box):
        if space.dtype is None or np.dtype(space.dtype).kind not in _NUMERIC_KINDS:
            return None
        return [(None, tuple(space.shape), np.dtype(space.dtype))]
    if isinstance(space, gym.spaces.Dict):
        out: List[LayoutEntry] = []
        for key, sub in space.spaces.items():
            if not isinstance(sub, gym.spaces.Box) or np.dtype(sub.dtype).kind not in _NUMERIC_KINDS:
                return None
            out.append((key, tuple(sub.shape), np.dtype(sub.dtype)))
        return out
    return None


def _offsets(layout: List[LayoutEntry], n: int) -> Tuple[List[int], int]:
    offsets, pos = [], 0
    for _, shape, dtype in layout:
        offsets.append(pos)
        nbytes = int(np.prod((n,) + shape, dtype=np.int64)) * dtype.itemsize
        pos += (nbytes + _ALIGN - 1) // _ALIGN * _ALIGN
    return offsets, max(pos, _ALIGN)


class ObsBlock:
    """The observation slots of one worker's envs, mapped in this process.

    ``write(slot, obs)`` copies an observation in (child side); ``read(slot, copy)`` returns it
    (parent side) as an array or a dict of arrays.
    """

    def __init__(self, layout: List[LayoutEntry], n: int, fd: Optional[int] = None) -> None:
        self.layout = layout
        self.n = n
        offsets, size = _offsets(layout, n)
        own = fd is None
        if fd is None:
            fd = os.memfd_create("stride-obs", os.MFD_CLOEXEC)
            os.ftruncate(fd, size)
        self.fd: Optional[int] = fd if own else None  # the creator keeps it until the child has a copy
        self._mm = mmap.mmap(fd, size)
        if not own:
            os.close(fd)  # the mapping keeps the memory alive
        self._arrays: Dict[Optional[str], npt.NDArray[np.generic]] = {}
        for (key, shape, dtype), off in zip(layout, offsets):
            count = int(np.prod((n,) + shape, dtype=np.int64))
            self._arrays[key] = np.frombuffer(self._mm, dtype=dtype, count=count, offset=off).reshape((n,) + shape)
        self._plain = layout[0][0] is None
        # a Dict layout's arrays by key (the same arrays; empty for a plain Box)
        self._keyed: Dict[str, npt.NDArray[np.generic]] = {k: a for k, a in self._arrays.items() if k is not None}
        # the plain Box's array; for a Dict layout an empty one that write's hot path never reaches
        self._plain_array: npt.NDArray[np.generic] = self._arrays.get(None, np.empty(0))
        self._plain_shape = layout[0][1] if self._plain else None

    def release_fd(self) -> None:
        """Close the creator's descriptor (once the child holds its own)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def write(self, slot: int, obs: object) -> None:
        if type(obs) is np.ndarray and obs.shape == self._plain_shape:  # the hot path: one check
            self._plain_array[slot] = obs
            return
        if self._plain:
            arr = self._arrays[None]
            value = np.asarray(obs)  # (an array of obs's shape that NumPy makes anyway to assign it)
            if value.shape != arr.shape[1:]:
                raise ValueError(f"observation of shape {value.shape} does not fit the observation space shape {arr.shape[1:]}")
            arr[slot] = value
            return
        if not isinstance(obs, dict) or len(obs) != len(self._keyed):
            raise ValueError(f"observation {type(obs).__name__} does not fit the Dict observation space keys {list(self._keyed)}")
        for key, arr in self._keyed.items():
            value = obs[key]
            if np.shape(value) != arr.shape[1:]:
                raise ValueError(f"observation['{key}'] of shape {np.shape(value)} does not fit the space shape {arr.shape[1:]}")
            arr[slot] = value

    def read(self, slot: int, copy: bool = True) -> ShmObs:
        if self._plain:
            v: npt.NDArray[np.generic] = self._arrays[None][slot]
            return v.copy() if copy else v
        if copy:
            return {k: a[slot].copy() for k, a in self._keyed.items()}
        return {k: a[slot] for k, a in self._keyed.items()}

    def read_all(self, copy: bool = True) -> List[ShmObs]:
        """Every slot's observation, index = slot: one copy of the whole block (not one per slot),
        then a view per slot into that copy."""
        if self._plain:
            return list(self._arrays[None].copy() if copy else self._arrays[None])
        arrays = {k: (a.copy() if copy else a) for k, a in self._keyed.items()}
        return [{k: a[slot] for k, a in arrays.items()} for slot in range(self.n)]

    def close(self) -> None:
        """Unmap (views handed out with ``copy=False`` keep the mapping alive until collected)."""
        self.release_fd()
        self._arrays = {}
        self._keyed = {}
        try:
            self._mm.close()
        except BufferError:  # a caller still holds a view; the mapping goes when it is collected
            pass
