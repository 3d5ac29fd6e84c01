"""The buffers behind one protocol: ``sample_batch`` gives ``(batch, ticket)``, the batch holds no
buffer ids, ``update(ticket, priorities)`` reaches the items the ticket names."""

from __future__ import annotations

import numpy as np
import pytest

from stride.data import (AdvancedReplayBuffer, EpisodeReplayBuffer, NaiveReplayBuffer, ReplayBuffer, Ticket,
                         create_buffer)
from stride.data.buffer import DemoMixBuffer
from stride.utils.registry import BUFFER_REGISTRY

IDS = {"replay_unique_id", "replay_buffer_idx"}


def _items(n, start=0):
    return [{"obs": np.full(2, i, np.float32), "reward": float(i)} for i in range(start, start + n)]


def _buffers():
    episodes = EpisodeReplayBuffer({"replay_buffer_size": 8}, seed=0)
    episodes.push([_items(3, 10 * k) for k in range(4)])
    flat = [NaiveReplayBuffer({"replay_buffer_size": 16}, seed=0),
            AdvancedReplayBuffer({"replay_buffer_size": 16, "priority": True}, seed=0)]
    for b in flat:
        b.push(_items(8))
    demo = NaiveReplayBuffer({"replay_buffer_size": 16}, seed=1)
    demo.push(_items(8, 100))
    mix = DemoMixBuffer(NaiveReplayBuffer({"replay_buffer_size": 16}, seed=2), demo, 0.5)
    mix.push(_items(8))
    return [*flat, episodes, mix]


@pytest.mark.parametrize("k", range(4))
def test_each_buffer_meets_the_protocol_and_its_batch_holds_no_ids(k):
    b = _buffers()[k]
    assert isinstance(b, ReplayBuffer)
    got = b.sample_batch(4, 0)
    assert got is not None
    batch, ticket = got
    assert isinstance(ticket, Ticket) and len(ticket.ids) == len(ticket.slots) == 4
    rows = batch if isinstance(batch, list) else [batch]
    assert all(not IDS & set(r) for r in rows)
    if isinstance(batch, list):  # each episode's first reward is 10 * its id
        assert [int(ep["reward"][0]) // 10 for ep in batch] == ticket.ids.tolist()
    else:  # an item's obs is its id (a demonstration's: 100 + id, its ticket id -1 - id)
        ids = np.where(ticket.ids < 0, 99 - ticket.ids, ticket.ids)
        assert batch["obs"][:, 0].astype(int).tolist() == ids.tolist()
    b.update(ticket, np.ones(4))
    assert b.sample_batch(10**6) is None


def test_update_with_the_ticket_sets_the_priorities_of_its_items():
    b = AdvancedReplayBuffer({"replay_buffer_size": 16, "priority": True}, seed=0)
    b.push(_items(8))
    _, ticket = b.sample_batch(4)
    assert b.update(ticket, np.arange(4) + 2.0) == 4
    assert b.priorities[ticket.slots].tolist() == (np.arange(4) + 2.0).tolist()
    b.push(_items(16, 8))  # every slot overwritten: the ticket's items are gone, the update applies to none
    assert b.update(ticket, np.full(4, 9.0)) == 0


def test_demo_mix_sends_each_row_back_to_its_own_store():
    demo = AdvancedReplayBuffer({"replay_buffer_size": 8, "priority": True}, seed=1)
    demo.push(_items(8, 100))
    mix = DemoMixBuffer(AdvancedReplayBuffer({"replay_buffer_size": 8, "priority": True}, seed=2), demo, 0.5)
    mix.push(_items(8))
    _, ticket = mix.sample_batch(4)
    assert (ticket.ids[:2] < 0).all() and (ticket.ids[2:] >= 0).all()
    mix.update(ticket, np.array([3.0, 4.0, 5.0, 6.0]))
    assert demo.priorities[ticket.slots[:2]].tolist() == [3.0, 4.0]
    assert mix.agent.priorities[ticket.slots[2:]].tolist() == [5.0, 6.0]


def test_create_buffer_refuses_a_type_that_misses_the_protocol(monkeypatch):
    class Partial:
        def __init__(self, cfg, seed=None, **_):
            pass

        def push(self, data, cur_collector_envstep=-1):
            pass

    # (found through the registry for this test only: a registered Partial would stay for later tests,
    # e.g. tests/config's scan of every registered buffer's declared config)
    real_get = BUFFER_REGISTRY.get
    monkeypatch.setattr(BUFFER_REGISTRY, "get", lambda name: Partial if name == "partial_for_test" else real_get(name))
    with pytest.raises(TypeError, match=r"'partial_for_test' lacks the ReplayBuffer methods \['sample_batch'"):
        create_buffer({"type": "partial_for_test"})
