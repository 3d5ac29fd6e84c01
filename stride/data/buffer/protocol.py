"""The one contract every replay buffer meets (``ReplayBuffer``) and the ``Ticket`` a batch comes with.

``sample_batch`` returns the batch and a ticket: which items the batch holds, row for row (their
ids and slots). The loop keeps the ticket, trains on the batch, and hands the ticket back with the
learner's priorities (``update(ticket, priorities)``): the batch carries no buffer bookkeeping, so
the policy never sees buffer ids. DI-engine and Tianshou put the indices into the batch, and every
policy has to pass them through or strip them.

The naive, advanced and episode buffers, :class:`~stride.data.buffer.demo_mix.DemoMixBuffer` and
the Ray replay role satisfy :class:`ReplayBuffer`; ``create_buffer`` returns it, so a user buffer
registered in ``BUFFER_REGISTRY`` is checked against the same contract the pipelines call.
"""

from __future__ import annotations

from typing import Dict, Mapping, NamedTuple, Optional, Protocol, Sequence, Tuple, Union, runtime_checkable

import numpy as np
import numpy.typing as npt
import torch

#: what ``sample_batch`` gives the learner: columns (``{field: array[size, ...]}``) or a list of episodes
SampledBatch = Union[Mapping[str, object], Sequence[Mapping[str, object]]]
ID_KEYS = ("replay_unique_id", "replay_buffer_idx")


class Ticket(NamedTuple):
    """Which items a sampled batch holds, row for row: ``ids`` (an item's id, unique over the
    buffer's life) and ``slots`` (where it was); an update applies only where the slot still holds
    the id (the item was not overwritten or evicted since)."""

    ids: npt.NDArray[np.int64]
    slots: npt.NDArray[np.int64]

    @classmethod
    def of(cls, ids: object, slots: object) -> "Ticket":
        """A ticket from any integer sequences (lists, arrays, tensors), flattened to int64."""
        return cls(np.asarray(ids, dtype=np.int64).reshape(-1), np.asarray(slots, dtype=np.int64).reshape(-1))

    def part(self, start: int, stop: int) -> "Ticket":
        """The rows ``start:stop`` (a learner replica's share of the batch)."""
        return Ticket(self.ids[start:stop], self.slots[start:stop])

    def where(self, mask: npt.NDArray[np.bool_]) -> "Ticket":
        """The rows where ``mask`` holds."""
        return Ticket(self.ids[mask], self.slots[mask])


Sampled = Tuple[SampledBatch, Ticket]


@runtime_checkable
class ReplayBuffer(Protocol):
    """What the serial, offline, league and parallel loops call on a replay buffer."""

    def push(self, data: Sequence[object], cur_collector_envstep: int = -1) -> object:
        """Store a list of samples (an episode buffer: a list of episodes)."""

    def sample_batch(self, size: int, cur_learner_iter: int = -1) -> Optional[Sampled]:
        """``(batch, ticket)`` of ``size`` items, or None while the buffer refuses (too few items)."""

    def update(self, ticket: Ticket, priorities: object) -> object:
        """New priorities of the items ``ticket`` names (ignored by buffers that sample uniformly)."""

    def count(self) -> int:
        """How many items can be sampled now."""

    def clear(self) -> None:
        """Drop every item (the league's exploiter empties its replay when it resets)."""

    def state_dict(self) -> Dict[str, object]:
        """Contents, ids and sampling RNG as tensors and plain values (a checkpoint's part)."""

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        """Back to what :meth:`state_dict` gave."""


def as_priorities(values: object) -> npt.NDArray[np.float64]:
    """A learner's priorities (list, array or tensor) as a flat float64 array."""
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    return np.asarray(values, dtype=np.float64).reshape(-1)


def priority_update(ticket: Union[Ticket, Mapping[str, object], None], priorities: object = None
                    ) -> Optional[Tuple[Ticket, npt.NDArray[np.float64]]]:
    """The ticket and priorities of an ``update`` call: ``update(ticket, priorities)``, or the
    documented form for items from ``sample`` -- one dict ``{'replay_unique_id': [...],
    'replay_buffer_idx': [...], 'priority': [...]}``; None for nothing to update."""
    if ticket is None:
        return None
    if isinstance(ticket, Ticket):
        return None if priorities is None else (ticket, as_priorities(priorities))
    if not ticket or "priority" not in ticket:
        return None
    return Ticket.of(ticket["replay_unique_id"], ticket["replay_buffer_idx"]), as_priorities(ticket["priority"])
