"""Persistence of ``AdvancedReplayBuffer``: ``save_data`` / ``load_data`` and ``state_dict`` / ``load_state_dict``.

Two forms, both without pickle: ``save_data`` writes the live items oldest first, with their ids,
priorities, use counts and collect iterations, to one ``.npz`` file (what a new buffer, maybe of
another capacity or storage type, loads: the newest ``capacity`` items if more); ``state_dict`` holds
the live items at their slots plus the ring position, RNG, sampler bound, beta schedule, monitor and
limiter counters as tensors and plain values, so that a resumed run samples exactly what an
uninterrupted one would (checkpoints load with ``torch.load(weights_only=True)``).
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
import torch

from ..npz import load_npz, save_npz


class AdvancedPersistence:
    """Mixin of :class:`~.advanced.AdvancedReplayBuffer` (uses its storage, metadata and parts)."""

    # ---- persistence -------------------------------------------------------------------------
    def _live_columns(self, slots: np.ndarray) -> Dict[str, np.ndarray]:
        cols = self._storage.get_columns(slots)
        bad = [k for k, c in cols.items() if c.dtype == object]
        if bad:
            raise ValueError(f"fields {bad} hold Python objects and cannot be saved without pickle")
        return cols

    def save_data(self, path: str) -> None:
        """Write the live items (oldest first) with ids, priorities, use counts and collect iterations
        to an ``.npz`` file, without pickle."""
        order = self.live_slots()
        save_npz(path, self._live_columns(order) if order.size else {},
                 {"replay_unique_id": self._ids[order], "priority": self._prio[order], "use_count": self._use[order],
                  "collect_iter": self._collect_iter[order], "next_id": self._next_id,
                  "max_priority": self._pri.max_priority})

    def load_data(self, path: str) -> None:
        """Replace the contents with what :meth:`save_data` wrote (the newest ``capacity`` items if more)."""
        cols, meta = load_npz(path)
        ids, prio, use, cit = meta["replay_unique_id"], meta["priority"], meta["use_count"], meta["collect_iter"]
        next_id, max_p = int(meta["next_id"]), float(meta["max_priority"])
        self._storage.clear()
        self._reset_meta()
        if self._file:
            self._storage.reset_layout()
        else:
            self._storage.columns = {}
        if cols and len(ids):
            keep = min(len(ids), self._storage.capacity)
            cols = {k: v[-keep:] for k, v in cols.items()}
            ids, prio, use, cit = ids[-keep:], prio[-keep:], use[-keep:], cit[-keep:]
            if self._file:
                slots = self._storage.append_columns(cols, ids.tolist())
            else:
                slots = self._storage.append_columns(cols)
            self._restore_meta(slots, ids, prio, use, cit)
        self._next_id = max(next_id, self._next_id)
        self._pri.max_priority = max_p
        if self._rate is not None:
            self._rate.reset(self._n_live)  # the limiter sees the loaded items as inserted

    def _restore_meta(self, slots: Any, ids: np.ndarray, prio: np.ndarray, use: np.ndarray, cit: np.ndarray) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        self._ids[slots] = ids
        self._live[slots] = True
        self._pri.restore(slots, prio)
        self._evictor.restore(slots, use, cit)
        self._n_live = int(self._live.sum())
        self._live_cache = None

    def state_dict(self) -> Dict[str, Any]:
        """Live items at their slots, ring position, metadata, RNG, beta schedule, counters (tensors + plain values)."""
        slots = np.flatnonzero(self._live)
        cols = self._live_columns(slots) if slots.size else {}
        t = lambda a: torch.from_numpy(np.ascontiguousarray(a))  # noqa: E731
        return {
            "columns": {k: t(v) for k, v in cols.items()},
            "slots": t(slots),
            "tail": int(self._storage.tail),
            "ring_size": int(self._storage.size),
            "ids": t(self._ids[slots]),
            "priority": t(self._prio[slots]),
            "use_count": t(self._use[slots]),
            "collect_iter": t(self._collect_iter[slots]),
            "next_id": self._next_id,
            "max_priority": self._pri.max_priority,
            "sampler": self._tree.state() if self._tree is not None else None,
            "learner_iter": self._learner_iter,
            "rng": self._rng.bit_generator.state,
            "monitor": self.monitor.state_dict(),
            "limiter": self._rate.state_dict() if self._rate is not None else None,
        }

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        cols = {k: v.numpy() for k, v in state["columns"].items()}
        slots = state["slots"].numpy().astype(np.int64)
        self._storage.clear()
        self._reset_meta()
        if self._file:
            self._storage.reset_layout()
            ids = state["ids"].numpy()
            self._storage.write_at(slots, cols, ids.tolist())
        else:
            self._storage.columns = {}
            if cols:
                self._storage._allocate({k: v[0] for k, v in cols.items()})
                for k, v in cols.items():
                    self._storage.columns[k][slots] = v
        self._storage.tail = int(state["tail"])
        self._storage.size = int(state["ring_size"])
        self._restore_meta(slots, state["ids"].numpy(), state["priority"].numpy(), state["use_count"].numpy(),
                           state["collect_iter"].numpy())
        self._next_id = int(state["next_id"])
        self._pri.max_priority = float(state["max_priority"])
        if self._tree is not None and state.get("sampler") is not None:
            self._tree.load_state(state["sampler"])
        self._learner_iter = int(state["learner_iter"])
        self._rng.bit_generator.state = state["rng"]
        self.monitor.load_state_dict(state["monitor"])
        if self._rate is not None and state.get("limiter") is not None:
            self._rate.load_state_dict(state["limiter"])
