"""``EpisodeReplayBuffer``: each element is a whole episode (a list of transitions).

For algorithms that need whole episodes (board/card games rewarded at the end, HER, ...). A FIFO
ring of ``replay_buffer_size`` episodes plus RL-Flow's sampling part, a
:class:`~stride.data.selectors.UniformSelector` over the occupied slots (storage + selector, as
RL-Flow composes a buffer): distinct episodes, every subset alike (the rule of the other buffers,
:class:`~stride.data.draws.BatchLimit`), or i.i.d. draws with ``replace=True``. Each episode is stored
as columns (``{field: array[T, ...]}``, one array per field, stacked once at push; a dict-of-arrays
field such as a goal-conditioned observation is one column per key, ``obs/desired_goal``, as in
the other buffers' storage, and comes back as a dict), so ``sample``
hands out copies (the seeds' form: a list of episodes, each a list of transition dicts carrying the
episode's ``replay_unique_id`` and ``replay_buffer_idx``) and ``sample_batch`` the columns
themselves with the episodes' :class:`~.protocol.Ticket`. ``save_data``/``load_data`` write ``.npz`` without pickle (transitions concatenated
plus the episode lengths); ``state_dict`` holds tensors and plain values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt
import torch

from ...config.config import Configurable
from ...config.view import ConfigView, setting
from ...utils.registry import BUFFER_REGISTRY
from ...utils.narrow import as_int, as_mapping, as_tensor, as_tensors
from ..draws import read_only
from ..npz import load_npz, save_npz
from ..selectors import UniformSelector
from ..storage import as_array, flatten_fields, nest_fields
from .protocol import Ticket

META_KEYS = ("replay_unique_id", "replay_buffer_idx")
Episode = Sequence[Mapping[str, object]]


def _stack(values: List[Any]) -> np.ndarray:
    """One field of an episode as an array; values without a common numeric shape become an object array."""
    if all(v is not None and not isinstance(v, (str, dict, list)) for v in values):
        arrs = [as_array(v) for v in values]
        if arrs[0].dtype != object and all(a.shape == arrs[0].shape for a in arrs):
            try:
                return np.stack(arrs)
            except (TypeError, ValueError):
                pass
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


@dataclass(frozen=True)
class EpisodeBufferConfig(ConfigView):
    """``policy.other.replay_buffer`` of an :class:`EpisodeReplayBuffer`."""

    #: the registered buffer name
    type: str = "episode"
    #: (int) capacity in episodes; the oldest episode is overwritten.
    replay_buffer_size: int = setting(1000, "[1, inf)")
    #: (int) sampling returns None while the buffer holds fewer episodes than this (or than the batch).
    min_sample_size: int = setting(0, "[0, inf)")
    #: (bool) False: a batch holds distinct episodes, every subset alike; True: i.i.d. draws (repeats possible).
    replace: bool = False


@BUFFER_REGISTRY.register("episode")
class EpisodeReplayBuffer(Configurable):
    """FIFO ring of whole episodes, sampled uniformly."""

    config_view = EpisodeBufferConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None, seed: Optional[int] = None, **_: object) -> None:
        self._cfg = c = self.typed_config(EpisodeBufferConfig, cfg, prefix="policy.other.replay_buffer.")
        self._capacity = c.replay_buffer_size
        self._data = np.empty(self._capacity, dtype=object)  # each: {field: array[T, ...]}
        self._ids = np.full(self._capacity, -1, dtype=np.int64)
        self._tail = 0
        self._size = 0
        self._next_id = 0
        self._push_count = 0
        self._rng = np.random.default_rng(seed)
        # the sampling part: a uniform selector over the occupied slots, drawing with this buffer's RNG
        self._selector = UniformSelector(self._rng, initial_capacity=self._capacity, replace=bool(c.replace))

    # ---- write -------------------------------------------------------------------------------
    @staticmethod
    def _episodes(data: Any) -> List[Episode]:
        if isinstance(data, Mapping):
            raise TypeError("EpisodeReplayBuffer.push takes an episode (a list of transition dicts) or a list of them")
        data = list(data)
        if not data:
            return []
        return [data] if isinstance(data[0], Mapping) else [list(ep) for ep in data]

    def push(self, data: Union[Episode, Sequence[object]], cur_collector_envstep: int = -1) -> None:
        """Add one episode (list of transition dicts) or a list of episodes; empty episodes are skipped."""
        episodes = [ep for ep in self._episodes(data) if len(ep)]
        if not episodes:
            return
        n = len(episodes)
        first_id = self._next_id
        self._next_id += n
        self._push_count += n
        if n > self._capacity:  # only the newest `capacity` episodes can survive
            episodes, first_id = episodes[-self._capacity:], first_id + n - self._capacity
        for k, ep in enumerate(episodes):
            ep = [flatten_fields(t) for t in ep]
            keys = [key for key in ep[0] if key not in META_KEYS]
            cols = {key: _stack([t[key] for t in ep]) for key in keys}
            self._data[self._tail] = cols
            self._ids[self._tail] = first_id + k
            self._tail = (self._tail + 1) % self._capacity
            self._size = min(self._size + 1, self._capacity)
        self._select_occupied()

    def _select_occupied(self) -> None:
        """The selector holds the occupied slots ``0..size-1`` (the ring fills them in order)."""
        held = len(self._selector)
        if held > self._size:
            self._selector.clear()
            held = 0
        if held < self._size:
            self._selector.add_batch(np.arange(held, self._size))

    # ---- read --------------------------------------------------------------------------------
    def _sample_slots(self, size: int) -> Optional[np.ndarray]:
        if self._size < max(size, self._cfg.min_sample_size, 1):
            return None
        return self._selector.sample_batch(size)[0]

    def sample(self, size: int, cur_learner_iter: int = -1) -> Optional[List[List[Dict[str, object]]]]:
        """``size`` distinct episodes drawn uniformly (every subset alike; i.i.d. draws with
        ``replace=True``), each a list of transition dicts (copies); None while fewer than
        ``max(size, min_sample_size)`` episodes are stored."""
        slots = self._sample_slots(size)
        if slots is None:
            return None
        out = []
        for slot in slots.tolist():
            cols = self._data[slot]
            uid = int(self._ids[slot])
            keys = list(cols)
            T = len(cols[keys[0]])
            ep = [nest_fields(dict(zip(keys, row))) for row in zip(*(list(c.copy()) for c in cols.values()))] \
                if keys else [{}] * T
            for t in ep:
                t["replay_unique_id"] = uid
                t["replay_buffer_idx"] = slot
            out.append(ep)
        return out

    def sample_batch(self, size: int, cur_learner_iter: int = -1
                     ) -> Optional[Tuple[List[Dict[str, object]], Ticket]]:
        """The episodes :meth:`sample` would draw, as columns (each ``{field: array[T, ...]}``;
        distinct episodes unless ``replace=True``), and their :class:`Ticket`."""
        slots = self._sample_slots(size)
        if slots is None:
            return None
        out = [nest_fields({k: v.copy() for k, v in self._data[slot].items()}) for slot in slots.tolist()]
        return out, Ticket(self._ids.take(slots), slots.astype(np.int64))

    def update(self, ticket: Union[Ticket, Mapping[str, object], None], priorities: object = None) -> None:
        """Priorities are meaningless for uniform sampling: ignored."""

    # ---- queries -----------------------------------------------------------------------------
    def _order(self) -> np.ndarray:
        if self._size < self._capacity:
            return np.arange(self._size)
        return (self._tail + np.arange(self._capacity)) % self._capacity

    @property
    def episode_len(self) -> List[int]:
        """Length of every stored episode, oldest first."""
        return [len(next(iter(self._data[s].values()))) if self._data[s] else 0 for s in self._order().tolist()]

    def transition_count(self) -> int:
        return int(sum(self.episode_len))

    def count(self) -> int:
        """Number of stored episodes."""
        return self._size

    def __len__(self) -> int:
        return self._size

    @property
    def push_count(self) -> int:
        return self._push_count

    def slots(self) -> npt.NDArray[np.int64]:
        """Occupied slots, oldest episode first."""
        return self._order()

    def episode_at(self, slot: int) -> Dict[str, npt.NDArray[np.generic]]:
        """The stored columns of the episode at ``slot`` (read-only views)."""
        return {k: read_only(v) for k, v in self._data[slot].items()}

    @property
    def unique_ids(self) -> npt.NDArray[np.int64]:
        """Per slot: the id of the episode there (-1: empty), read-only."""
        return read_only(self._ids)

    def clear(self) -> None:
        self._data[:] = None
        self._ids[:] = -1
        self._tail = 0
        self._size = 0
        self._selector.clear()

    def close(self) -> None:
        self.clear()

    # ---- persistence -------------------------------------------------------------------------
    def _flat(self, order: np.ndarray) -> Dict[str, np.ndarray]:
        eps = [self._data[s] for s in order.tolist()]
        if not eps:
            return {}
        keys = list(eps[0])
        cols = {}
        for k in keys:
            parts = [ep[k] for ep in eps]
            if any(p.dtype == object for p in parts):
                raise ValueError(f"field '{k}' holds Python objects and cannot be saved without pickle")
            cols[k] = np.concatenate(parts)
        return cols

    def _unflat(self, cols: Mapping[str, np.ndarray], lengths: np.ndarray) -> List[Dict[str, np.ndarray]]:
        bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return [{k: np.array(v[bounds[i]:bounds[i + 1]]) for k, v in cols.items()} for i in range(len(lengths))]

    def save_data(self, path: str) -> None:
        """Write the episodes (oldest first) and their ids to an ``.npz`` file, without pickle."""
        order = self._order()
        save_npz(path, self._flat(order), {"episode_len": np.asarray(self.episode_len, dtype=np.int64),
                                           "replay_unique_id": self._ids[order], "next_id": self._next_id})

    def load_data(self, path: str) -> None:
        """Replace the contents with what :meth:`save_data` wrote (the newest ``capacity`` episodes if more)."""
        cols, meta = load_npz(path)
        lengths, ids, next_id = meta["episode_len"], meta["replay_unique_id"], int(meta["next_id"])
        self.clear()
        eps = self._unflat(cols, lengths)[-self._capacity:]
        ids = ids[-self._capacity:]
        for i, ep in enumerate(eps):
            self._data[i] = ep
            self._ids[i] = ids[i]
        self._size = len(eps)
        self._select_occupied()
        self._tail = self._size % self._capacity
        self._next_id = next_id

    def state_dict(self) -> Dict[str, object]:
        """Episodes in slot order, ring position, ids, RNG (tensors + plain values)."""
        order = np.arange(self._size)
        return {
            "columns": {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in self._flat(order).items()},
            "episode_len": torch.tensor([len(next(iter(self._data[s].values()))) for s in order.tolist()],
                                        dtype=torch.int64),
            "ids": torch.from_numpy(self._ids[: self._size].copy()),
            "tail": self._tail,
            "next_id": self._next_id,
            "push_count": self._push_count,
            "rng": self._rng.bit_generator.state,
        }

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self.clear()
        columns = as_tensors(state["columns"], "buffer state 'columns'")
        eps = self._unflat({k: v.numpy() for k, v in columns.items()},
                           as_tensor(state["episode_len"], "buffer state 'episode_len'").numpy())
        for i, ep in enumerate(eps):
            self._data[i] = ep
        self._size = len(eps)
        self._select_occupied()
        self._ids[: self._size] = as_tensor(state["ids"], "buffer state 'ids'").numpy()
        self._tail = as_int(state["tail"], "buffer state 'tail'")
        self._next_id = as_int(state["next_id"], "buffer state 'next_id'")
        self._push_count = as_int(state["push_count"], "buffer state 'push_count'")
        self._rng.bit_generator.state = dict(as_mapping(state["rng"], "buffer state 'rng'"))
