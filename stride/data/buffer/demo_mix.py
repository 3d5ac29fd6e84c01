"""``DemoMixBuffer``: the agent's replay buffer beside a fixed one of demonstrations, every batch a
set fraction of each -- SQIL's half and half, R2D3's demo ratio ``pho`` (Paine et al., 2019).

Both are ordinary buffers (any registered type, each with its own sampler): the agent's takes every
push; the demonstrations' is filled once, by the entry, from the dataset
(:mod:`stride.entry.demonstrations`). A batch of ``size`` holds exactly ``round(size *
demo_fraction)`` demonstration samples first, then the agent's; it is None while either cannot give
its share.

Prioritised stores (R2D3): each side is its own prioritised buffer -- its own
:class:`~stride.data.priority.PriorityTable`, so demonstrations are drawn by *their* priorities
among themselves and the agent's by theirs, whatever the two scales are, and each side's IS
weights are normalised within its own store. The learner's priorities go back to the store each
row came from: a demonstration row's ``replay_unique_id`` is handed out as ``-1 - id`` (negative;
the agent's ids are >= 0), so :meth:`update` splits the learner's ``{'replay_unique_id',
'replay_buffer_idx', 'priority'}`` by sign with no memory of which batch it came from (updates may
arrive late or for several batches at once). Both states (contents, priorities, sampling RNGs) are
in the checkpoint, so a resumed run draws the same batches.

Better than DI-engine on purpose: its SQIL and R2D3 entries keep a second collector and buffer
inside a copy of the serial loop, and R2D3's demo count per batch is a Binomial(``batch``, ``pho``)
draw; here the serial loop is unchanged and sees one buffer, and the count is fixed (the same mean,
no batch without demonstrations by chance).
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence, Union

import numpy as np
import torch

from ...utils.errors import ConfigError
from ...utils.narrow import as_mapping

_ID = "replay_unique_id"


def demo_count(size: int, demo_fraction: float) -> int:
    """Demonstration rows in a batch of ``size``: ``round(size * demo_fraction)`` (Python's rounding)."""
    return int(round(size * demo_fraction))


class DemoMixBuffer:
    """``agent`` (pushed to, sampled for ``1 - demo_fraction`` of a batch) + ``demo`` (the rest)."""

    def __init__(self, agent: Any, demo: Any, demo_fraction: float) -> None:
        if not 0.0 < demo_fraction < 1.0:
            raise ConfigError(f"the demonstrations' share of a batch must be in (0, 1), got {demo_fraction!r}")
        self.agent, self.demo, self.demo_fraction = agent, demo, float(demo_fraction)

    def push(self, data: Union[Mapping[str, object], Sequence[Mapping[str, object]]], cur_collector_envstep: int = -1) -> None:
        """The agent's transitions (the demonstrations are fixed)."""
        self.agent.push(data, cur_collector_envstep=cur_collector_envstep)

    def sample_batch(self, size: int, cur_learner_iter: int = -1) -> Optional[Dict[str, np.ndarray]]:
        """``round(size * demo_fraction)`` demonstration samples then the agent's, as columns; the
        demonstrations' ``replay_unique_id`` is ``-1 - id`` (see the module docstring)."""
        n_demo = demo_count(size, self.demo_fraction)
        if self.agent.count() < size - n_demo or self.demo.count() < n_demo:
            return None  # (neither buffer draws: its RNG only moves for batches that are used)
        demo: Optional[Dict[str, np.ndarray]] = self.demo.sample_batch(n_demo, cur_learner_iter) if n_demo else None
        if demo is not None and _ID in demo:
            demo[_ID] = -1 - np.asarray(demo[_ID], dtype=np.int64)
        agent: Optional[Dict[str, np.ndarray]] = \
            self.agent.sample_batch(size - n_demo, cur_learner_iter) if n_demo < size else None
        if demo is None or agent is None:
            return agent if n_demo == 0 else demo if n_demo == size else None
        missing = set(demo) ^ set(agent)
        if missing:
            raise ConfigError(f"demonstration and agent samples differ in the fields {sorted(missing)}: the dataset "
                              "must be replayed through the same policy that collects, into buffers of one type")
        return {k: np.concatenate([demo[k], np.asarray(agent[k], dtype=np.result_type(demo[k], agent[k]))])
                for k in demo}

    def update(self, info: Optional[Mapping[str, object]]) -> None:
        """The learner's priorities, each back to its own store: rows with a negative
        ``replay_unique_id`` (``-1 - id``) to the demonstrations', the rest to the agent's."""
        if not info or _ID not in info:
            return
        uid, idx, prio = (_flat(info[k]) for k in (_ID, "replay_buffer_idx", "priority"))
        is_demo = uid.astype(np.int64) < 0
        if is_demo.any():
            self.demo.update({_ID: -1 - uid[is_demo], "replay_buffer_idx": idx[is_demo], "priority": prio[is_demo]})
        if not is_demo.all():
            keep = ~is_demo
            self.agent.update({_ID: uid[keep], "replay_buffer_idx": idx[keep], "priority": prio[keep]})

    def count(self) -> int:
        """The agent's items (what the pipeline's warm-up and sampling wait for)."""
        return int(self.agent.count())

    def __len__(self) -> int:
        return self.count()

    def state_dict(self) -> Dict[str, object]:
        return {"agent": self.agent.state_dict(), "demo": self.demo.state_dict()}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self.agent.load_state_dict(as_mapping(state["agent"], "buffer state 'agent'"))
        self.demo.load_state_dict(as_mapping(state["demo"], "buffer state 'demo'"))


def _flat(values: object) -> np.ndarray:
    """A learner's list / array / tensor as a flat NumPy array."""
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    return np.asarray(values).reshape(-1)
