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
row came from: a demonstration row's id in the batch's ticket is ``-1 - id`` (negative; the agent's ids
are >= 0), so :meth:`update` splits a ticket by sign with no memory of which batch it came from
(updates may arrive late or for several batches at once). Both states (contents, priorities, sampling RNGs) are
in the checkpoint, so a resumed run draws the same batches.

Better than DI-engine on purpose: its SQIL and R2D3 entries keep a second collector and buffer
inside a copy of the serial loop, and R2D3's demo count per batch is a Binomial(``batch``, ``pho``)
draw; here the serial loop is unchanged and sees one buffer, and the count is fixed (the same mean,
no batch without demonstrations by chance).
"""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence, Union

import numpy as np

from ...utils.errors import ConfigError
from ...utils.narrow import as_mapping
from .protocol import ReplayBuffer, Sampled, SampledBatch, Ticket, priority_update


def demo_count(size: int, demo_fraction: float) -> int:
    """Demonstration rows in a batch of ``size``: ``round(size * demo_fraction)`` (Python's rounding)."""
    return int(round(size * demo_fraction))


class DemoMixBuffer:
    """``agent`` (pushed to, sampled for ``1 - demo_fraction`` of a batch) + ``demo`` (the rest)."""

    def __init__(self, agent: ReplayBuffer, demo: ReplayBuffer, demo_fraction: float) -> None:
        if not 0.0 < demo_fraction < 1.0:
            raise ConfigError(f"the demonstrations' share of a batch must be in (0, 1), got {demo_fraction!r}")
        self.agent, self.demo, self.demo_fraction = agent, demo, float(demo_fraction)

    def push(self, data: Sequence[object], cur_collector_envstep: int = -1) -> None:
        """The agent's transitions (the demonstrations are fixed)."""
        self.agent.push(data, cur_collector_envstep=cur_collector_envstep)

    def sample_batch(self, size: int, cur_learner_iter: int = -1) -> Optional[Sampled]:
        """``round(size * demo_fraction)`` demonstration samples then the agent's, as columns, and their
        ticket, where the demonstrations' ids are ``-1 - id`` (see the module docstring)."""
        n_demo = demo_count(size, self.demo_fraction)
        if self.agent.count() < size - n_demo or self.demo.count() < n_demo:
            return None  # (neither buffer draws: its RNG only moves for batches that are used)
        demo = self.demo.sample_batch(n_demo, cur_learner_iter) if n_demo else None
        if demo is not None:
            demo = demo[0], Ticket(-1 - demo[1].ids, demo[1].slots)
        agent = self.agent.sample_batch(size - n_demo, cur_learner_iter) if n_demo < size else None
        if demo is None or agent is None:
            return agent if n_demo == 0 else demo if n_demo == size else None
        d, a = _columns(demo[0]), _columns(agent[0])
        missing = set(d) ^ set(a)
        if missing:
            raise ConfigError(f"demonstration and agent samples differ in the fields {sorted(missing)}: the dataset "
                              "must be replayed through the same policy that collects, into buffers of one type")
        batch = {k: np.concatenate([np.asarray(d[k]), np.asarray(a[k], dtype=np.result_type(d[k], a[k]))]) for k in d}
        return batch, Ticket(np.concatenate([demo[1].ids, agent[1].ids]), np.concatenate([demo[1].slots, agent[1].slots]))

    def update(self, ticket: Union[Ticket, Mapping[str, object], None], priorities: object = None) -> None:
        """The learner's priorities, each back to its own store: rows with a negative id
        (``-1 - id``) to the demonstrations', the rest to the agent's."""
        given = priority_update(ticket, priorities)
        if given is None:
            return
        (uid, idx), prio = given
        is_demo = uid < 0
        if is_demo.any():
            self.demo.update(Ticket(-1 - uid[is_demo], idx[is_demo]), prio[is_demo])
        if not is_demo.all():
            keep = ~is_demo
            self.agent.update(Ticket(uid[keep], idx[keep]), prio[keep])

    def count(self) -> int:
        """The agent's items (what the pipeline's warm-up and sampling wait for)."""
        return int(self.agent.count())

    def __len__(self) -> int:
        return self.count()

    def clear(self) -> None:
        """Drop the agent's items (the demonstrations stay)."""
        self.agent.clear()

    def state_dict(self) -> Dict[str, object]:
        return {"agent": self.agent.state_dict(), "demo": self.demo.state_dict()}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self.agent.load_state_dict(as_mapping(state["agent"], "buffer state 'agent'"))
        self.demo.load_state_dict(as_mapping(state["demo"], "buffer state 'demo'"))


def _columns(batch: SampledBatch) -> Dict[str, np.ndarray]:
    """A buffer's column batch (a mix of episode lists is not defined)."""
    if not isinstance(batch, Mapping):
        raise ConfigError("demonstrations mix with buffers that sample columns (naive, advanced), not episodes")
    return {k: np.asarray(v) for k, v in batch.items()}
