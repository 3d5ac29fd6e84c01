"""``DemoMixBuffer``: the agent's replay buffer beside a fixed one of demonstrations, every batch a
set fraction of each (the seeds' SQIL: half and half; R2D3's ``pho`` is the same idea).

Both are ordinary buffers (any registered type): the agent's takes every push; the demonstrations'
is filled once, by the entry, from the dataset (:mod:`stride.entry.demonstrations`). A batch of
``size`` holds ``round(size * demo_fraction)`` demonstration samples first, then the agent's; it is
None while either cannot give its share. Both states (contents and sampling RNGs) are in the
checkpoint, so a resumed run draws the same batches. Priorities are not split back (yet): a
prioritised config is refused where this buffer is built.

Better than DI-engine on purpose: its SQIL and R2D3 entries keep a second collector and buffer
inside a copy of the serial loop; here the serial loop is unchanged and sees one buffer.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence, Union

import numpy as np

from ...utils.errors import ConfigError
from ...utils.narrow import as_mapping


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
        """``round(size * demo_fraction)`` demonstration samples then the agent's, as columns."""
        n_demo = int(round(size * self.demo_fraction))
        if self.agent.count() < size - n_demo or self.demo.count() < n_demo:
            return None  # (neither buffer draws: its RNG only moves for batches that are used)
        demo = self.demo.sample_batch(n_demo, cur_learner_iter)
        agent = self.agent.sample_batch(size - n_demo, cur_learner_iter)
        if demo is None or agent is None:
            return None
        missing = set(demo) ^ set(agent)
        if missing:
            raise ConfigError(f"demonstration and agent samples differ in the fields {sorted(missing)}: the dataset "
                              "must be replayed through the same policy that collects")
        return {k: np.concatenate([demo[k], np.asarray(agent[k], dtype=np.result_type(demo[k], agent[k]))])
                for k in demo}

    def update(self, info: Optional[Mapping[str, object]]) -> None:
        """Priorities are not split back to the two buffers: refused where it is built."""

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
