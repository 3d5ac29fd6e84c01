"""DemoMixBuffer: pushes go to the agent's buffer, batches are exactly round(B * demo_fraction)
demonstrations first, None while either side cannot give its share; with two prioritised stores
(R2D3) each side is drawn by its own priorities and the learner's priorities go back to the store
each row came from (the two stores' ids overlap); state round trip draws the same batches."""

from __future__ import annotations

import numpy as np
import pytest

from stride.data import AdvancedReplayBuffer, NaiveReplayBuffer
from stride.data.buffer.demo_mix import DemoMixBuffer, demo_count
from stride.utils.errors import ConfigError
from .stats_refs import with_ids


def items(n: int, reward: float, start: int = 0):
    return [{"obs": np.full(2, start + i, np.float32), "action": np.int64(i % 2), "reward": reward,
             "next_obs": np.zeros(2, np.float32), "done": False} for i in range(n)]


def make(fraction: float = 0.25, seed: int = 0) -> DemoMixBuffer:
    demo = NaiveReplayBuffer({"replay_buffer_size": 50}, seed=seed + 1)
    demo.push(items(50, 1.0, start=1000))
    return DemoMixBuffer(NaiveReplayBuffer({"replay_buffer_size": 100}, seed=seed), demo, fraction)


def test_fraction_order_and_pushes_to_the_agent():
    buf = make(0.25)
    assert buf.count() == 0 and with_ids(buf.sample_batch(8)) is None  # the agent has nothing yet
    buf.push(items(5, 0.0))
    assert buf.count() == 5 and with_ids(buf.sample_batch(8)) is None  # 6 agent samples needed
    buf.push(items(10, 0.0, start=5))
    batch = with_ids(buf.sample_batch(8))
    assert batch["reward"].tolist() == [1.0, 1.0] + [0.0] * 6
    assert (batch["obs"][:2, 0] >= 1000).all() and (batch["obs"][2:, 0] < 1000).all()
    assert buf.demo.count() == 50  # demonstrations are never pushed to


def test_state_round_trip_draws_the_same_batches():
    a = make(0.5)
    a.push(items(30, 0.0))
    with_ids(a.sample_batch(10))
    b = make(0.5, seed=7)
    b.load_state_dict(a.state_dict())
    x, y = with_ids(a.sample_batch(10)), with_ids(b.sample_batch(10))
    assert all(np.array_equal(x[k], y[k]) for k in x)


def test_fraction_out_of_range_is_refused():
    with pytest.raises(ConfigError, match="share of a batch must be in \\(0, 1\\), got 1.0"):
        make(1.0)


def make_prioritised(fraction: float = 0.25, seed: int = 0, n_demo: int = 20, n_agent: int = 80) -> DemoMixBuffer:
    """Two prioritised stores whose ids overlap: demo ids 0..n_demo-1, agent ids 0..n_agent-1."""
    demo = AdvancedReplayBuffer({"replay_buffer_size": n_demo, "alpha": 1.0}, seed=seed + 1)
    demo.push(items(n_demo, 1.0, start=1000))
    agent = AdvancedReplayBuffer({"replay_buffer_size": 100, "alpha": 1.0}, seed=seed)
    mix = DemoMixBuffer(agent, demo, fraction)
    mix.push(items(n_agent, 0.0))
    return mix


@pytest.mark.parametrize("size, fraction", [(32, 0.25), (32, 1 / 256), (64, 1 / 256), (7, 0.5), (10, 0.33), (3, 0.9)])
def test_batch_holds_exactly_round_pho_b_demonstrations_first(size, fraction):
    mix = make_prioritised(fraction)
    n = demo_count(size, fraction)
    assert n == round(size * fraction)
    for _ in range(5):
        batch = with_ids(mix.sample_batch(size))
        demo = batch["reward"] == 1.0
        assert batch["reward"].shape == (size,) and int(demo.sum()) == n and demo[:n].all()
        # demonstrations carry -1 - id, the agent's rows their own ids
        assert (batch["replay_unique_id"][:n] < 0).all() and (batch["replay_unique_id"][n:] >= 0).all()
        assert set((-1 - batch["replay_unique_id"][:n]).tolist()) <= set(range(20))
        assert "IS" in batch and batch["IS"].shape == (size,)


def test_priorities_go_back_to_the_store_each_row_came_from():
    mix = make_prioritised(0.25)
    batch = with_ids(mix.sample_batch(16))
    demo_slots, agent_slots = batch["replay_buffer_idx"][:4], batch["replay_buffer_idx"][4:]
    before_demo, before_agent = mix.demo.priorities.copy(), mix.agent.priorities.copy()
    prio = np.concatenate([np.full(4, 7.0), np.full(12, 3.0)])
    mix.update({"replay_unique_id": batch["replay_unique_id"], "replay_buffer_idx": batch["replay_buffer_idx"],
                "priority": prio})
    want_demo, want_agent = before_demo.copy(), before_agent.copy()
    want_demo[demo_slots] = 7.0
    want_agent[agent_slots] = 3.0
    np.testing.assert_array_equal(mix.demo.priorities, want_demo)
    np.testing.assert_array_equal(mix.agent.priorities, want_agent)
    # a demonstration's priority never lands in the agent's store, even at a slot both stores use
    assert not (mix.agent.priorities == 7.0).any() and not (mix.demo.priorities == 3.0).any()


def test_demonstrations_are_drawn_by_their_own_priorities_whatever_the_agents_scale():
    mix = make_prioritised(0.25, n_demo=20)
    # agent rows: huge priorities; demonstration slot 5: 1000x the other demonstrations
    n_agent = mix.agent.count()
    mix.update({"replay_unique_id": np.arange(n_agent), "replay_buffer_idx": np.arange(n_agent),
                "priority": np.full(n_agent, 1e6)})
    mix.update({"replay_unique_id": -1 - np.arange(20), "replay_buffer_idx": np.arange(20),
                "priority": np.where(np.arange(20) == 5, 1000.0, 1.0)})
    hits = 0
    for _ in range(200):
        batch = with_ids(mix.sample_batch(8))
        assert int((batch["reward"] == 1.0).sum()) == 2  # the share is fixed, not a priority contest
        hits += int(5 in (-1 - batch["replay_unique_id"][:2]).tolist())
    assert hits == 200  # inclusion probability min(1, 2 * 1000 / 1019) = 1


def test_agent_only_updates_and_stale_entries():
    mix = make_prioritised(0.25)
    mix.update(None)
    mix.update({"replay_unique_id": np.array([3]), "replay_buffer_idx": np.array([3]), "priority": np.array([9.0])})
    assert mix.agent.priorities[3] == 9.0 and mix.demo.priorities[3] == 1.0
    # an id that is not (any more) at that slot is ignored by the store it names
    mix.update({"replay_unique_id": np.array([-1 - 4]), "replay_buffer_idx": np.array([5]), "priority": np.array([9.0])})
    assert not (mix.demo.priorities == 9.0).any()


def test_prioritised_state_round_trip_draws_the_same_batches():
    a = make_prioritised(0.25)
    batch = with_ids(a.sample_batch(8))
    a.update({"replay_unique_id": batch["replay_unique_id"], "replay_buffer_idx": batch["replay_buffer_idx"],
              "priority": np.linspace(0.1, 5.0, 8)})
    b = make_prioritised(0.25, seed=7)
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a.demo.priorities, b.demo.priorities)
    np.testing.assert_array_equal(a.agent.priorities, b.agent.priorities)
    for _ in range(3):
        x, y = with_ids(a.sample_batch(8)), with_ids(b.sample_batch(8))
        assert all(np.array_equal(x[k], y[k]) for k in x)
