"""Observation slots in shared memory, one block per worker process.

A block holds, for each observation key, an array ``(envs_in_worker, *shape)`` of the space's dtype.
An :class:`~stride.envs.agent_dict.AgentDict` observation (``{agent: obs}``, any subset of the
agents) gets each agent's arrays plus a presence flag per agent and slot, so a multi-agent env's
observations take the same path as everyone's. It lives in an anonymous ``memfd`` (Linux) whose descriptor is handed to the child over its pipe,
so no name ever appears in ``/dev/shm``: a SIGKILLed parent cannot leak a segment (DI-engine's
``multiprocessing.Array`` and Gymnasium's buffers are inherited by fork; ``SharedMemory`` names
leak on SIGKILL). Without ``os.memfd_create`` the managers fall back to sending obs through the pipe.
"""

from __future__ import annotations

import mmap
import os
from typing import Any, Dict, List, Optional, Tuple, Union

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ..agent_dict import AgentDict

_ALIGN = 64
#: (Dict key or None, shape, dtype, agent or None): an array of an observation; ``agent`` names the
#: agent of an AgentDict observation the array belongs to (None for single-agent spaces)
LayoutEntry = Tuple[Optional[str], Tuple[int, ...], np.dtype[np.generic], Optional[str]]
#: one agent's observation as shared memory holds it: an array (a Box) or a dict of arrays (a Dict of Boxes)
AgentObs = Union[npt.NDArray[np.generic], Dict[str, npt.NDArray[np.generic]]]
#: an observation as shared memory holds it: an agent's kind, or ``{agent: AgentObs}`` (an AgentDict)
ShmObs = Union[AgentObs, Dict[str, AgentObs]]
_NUMERIC_KINDS = "biuf"  # bool, signed, unsigned, float


def shm_available() -> bool:
    """Whether this platform can create anonymous shared memory that a descriptor can carry."""
    return hasattr(os, "memfd_create")


def obs_layout(space: gym.spaces.Space[object]) -> Optional[List[LayoutEntry]]:
    """``[(key, shape, dtype, agent), ...]`` for a fixed-shape numeric Box, a Dict of Boxes, or an
    :class:`AgentDict` of either; None otherwise.

    ``key`` is None for a plain Box observation (or agent observation); ``agent`` is None unless
    the space is an AgentDict.
    """
    if isinstance(space, AgentDict):
        out: List[LayoutEntry] = []
        for agent, sub in space.spaces.items():
            inner = _single_layout(sub)
            if inner is None:
                return None
            out.extend((key, shape, dtype, agent) for key, shape, dtype, _ in inner)
        return out or None
    return _single_layout(space)


def _single_layout(space: gym.spaces.Space[Any]) -> Optional[List[LayoutEntry]]:
    """The layout of a Box or a Dict of Boxes (one agent's observation)."""
    if isinstance(space, gym.spaces.Box):
        if space.dtype is None or np.dtype(space.dtype).kind not in _NUMERIC_KINDS:
            return None
        return [(None, tuple(space.shape), np.dtype(space.dtype), None)]
    if isinstance(space, gym.spaces.Dict) and not isinstance(space, AgentDict):
        out: List[LayoutEntry] = []
        for key, sub in space.spaces.items():
            if not isinstance(sub, gym.spaces.Box) or np.dtype(sub.dtype).kind not in _NUMERIC_KINDS:
                return None
            out.append((key, tuple(sub.shape), np.dtype(sub.dtype), None))
        return out
    return None


def _offsets(layout: List[LayoutEntry], n: int) -> Tuple[List[int], int]:
    offsets, pos = [], 0
    for _, shape, dtype, _ in layout:
        offsets.append(pos)
        nbytes = int(np.prod((n,) + shape, dtype=np.int64)) * dtype.itemsize
        pos += (nbytes + _ALIGN - 1) // _ALIGN * _ALIGN
    return offsets, max(pos, _ALIGN)


class ObsBlock:
    """The observation slots of one worker's envs, mapped in this process.

    ``write(slot, obs)`` copies an observation in (child side); ``read(slot, copy)`` returns it
    (parent side) as an array, a dict of arrays, or (an AgentDict layout) ``{agent: either}`` over
    the agents present in that slot.
    """

    def __init__(self, layout: List[LayoutEntry], n: int, fd: Optional[int] = None) -> None:
        self.layout = layout
        self.n = n
        agents = list(dict.fromkeys(agent for *_, agent in layout if agent is not None))
        # an AgentDict layout ends with the presence flags: (n, agents) bytes
        full = layout + ([(None, (len(agents),), np.dtype(np.uint8), None)] if agents else [])
        offsets, size = _offsets(full, n)
        own = fd is None
        if fd is None:
            fd = os.memfd_create("stride-obs", os.MFD_CLOEXEC)
            os.ftruncate(fd, size)
        self.fd: Optional[int] = fd if own else None  # the creator keeps it until the child has a copy
        self._mm = mmap.mmap(fd, size)
        if not own:
            os.close(fd)  # the mapping keeps the memory alive
        arrays = []
        for (_, shape, dtype, _), off in zip(full, offsets):
            count = int(np.prod((n,) + shape, dtype=np.int64))
            arrays.append(np.frombuffer(self._mm, dtype=dtype, count=count, offset=off).reshape((n,) + shape))
        self._present: Optional[npt.NDArray[np.generic]] = arrays.pop() if agents else None
        #: per agent (one part, named None, for a single-agent layout): (plain Box array or None, {key: array})
        self._parts: Dict[Optional[str], Tuple[Optional[npt.NDArray[np.generic]], Dict[str, npt.NDArray[np.generic]]]] = {}
        for (key, _, _, agent), arr in zip(layout, arrays):
            plain, keyed = self._parts.get(agent, (None, {}))
            if key is None:
                plain = arr
            else:
                keyed[key] = arr
            self._parts[agent] = (plain, keyed)
        self._agents = agents
        self._plain = not agents and layout[0][0] is None
        # the plain Box's array; for other layouts an empty one that write's hot path never reaches
        self._plain_array: npt.NDArray[np.generic] = arrays[0] if self._plain else np.empty(0)
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
        if self._present is None:
            self._write_part(self._parts[None], slot, obs, "observation")
            return
        if not isinstance(obs, dict) or not obs.keys() <= self._parts.keys():
            got = sorted(obs) if isinstance(obs, dict) else type(obs).__name__
            raise ValueError(f"observation {got!r} does not fit the AgentDict observation space agents {self._agents}")
        present = self._present[slot]
        for i, agent in enumerate(self._agents):
            value = obs.get(agent)
            present[i] = value is not None
            if value is not None:
                self._write_part(self._parts[agent], slot, value, f"observation[{agent!r}]")

    @staticmethod
    def _write_part(part: Tuple[Optional[npt.NDArray[np.generic]], Dict[str, npt.NDArray[np.generic]]], slot: int,
                    obs: object, name: str) -> None:
        """Write one (agent's) observation: an array into the plain array, or a dict key by key."""
        plain, keyed = part
        if plain is not None:
            value = np.asarray(obs)  # (an array of obs's shape that NumPy makes anyway to assign it)
            if value.shape != plain.shape[1:]:
                raise ValueError(f"{name} of shape {value.shape} does not fit the observation space shape {plain.shape[1:]}")
            plain[slot] = value
            return
        if not isinstance(obs, dict) or len(obs) != len(keyed):
            raise ValueError(f"{name} {type(obs).__name__} does not fit the Dict observation space keys {list(keyed)}")
        for key, arr in keyed.items():
            value = obs[key]
            if np.shape(value) != arr.shape[1:]:
                raise ValueError(f"{name}['{key}'] of shape {np.shape(value)} does not fit the space shape {arr.shape[1:]}")
            arr[slot] = value

    @staticmethod
    def _read_part(part: Tuple[Optional[npt.NDArray[np.generic]], Dict[str, npt.NDArray[np.generic]]], slot: int,
                   copy: bool) -> AgentObs:
        plain, keyed = part
        if plain is not None:
            v: npt.NDArray[np.generic] = plain[slot]
            return v.copy() if copy else v
        if copy:
            return {k: a[slot].copy() for k, a in keyed.items()}
        return {k: a[slot] for k, a in keyed.items()}

    def read(self, slot: int, copy: bool = True) -> ShmObs:
        if self._plain:
            v: npt.NDArray[np.generic] = self._plain_array[slot]
            return v.copy() if copy else v
        if self._present is None:
            return self._read_part(self._parts[None], slot, copy)
        present = self._present[slot]
        return {agent: self._read_part(self._parts[agent], slot, copy)
                for i, agent in enumerate(self._agents) if present[i]}

    def read_all(self, copy: bool = True) -> List[ShmObs]:
        """Every slot's observation, index = slot: one copy of the whole block (not one per slot),
        then a view per slot into that copy."""
        if self._plain:
            return list(self._plain_array.copy() if copy else self._plain_array)
        if self._present is not None:  # multi-agent: few envs per worker, a copy per slot is fine
            return [self.read(slot, copy) for slot in range(self.n)]
        plain, keyed = self._parts[None]
        arrays = {k: (a.copy() if copy else a) for k, a in keyed.items()}
        return [{k: a[slot] for k, a in arrays.items()} for slot in range(self.n)]

    def close(self) -> None:
        """Unmap (views handed out with ``copy=False`` keep the mapping alive until collected)."""
        self.release_fd()
        self._parts = {}
        self._present = None
        self._plain_array = np.empty(0)
        try:
            self._mm.close()
        except BufferError:  # a caller still holds a view; the mapping goes when it is collected
            pass
