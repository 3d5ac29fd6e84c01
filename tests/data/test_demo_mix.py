"""DemoMixBuffer: pushes go to the agent's buffer, batches are demo_fraction demonstrations first,
None while either side cannot give its share, state round trip draws the same batches."""

from __future__ import annotations

import numpy as np
import pytest

from stride.data import NaiveReplayBuffer
from stride.data.buffer.demo_mix import DemoMixBuffer
from stride.utils.errors import ConfigError


def items(n: int, reward: float, start: int = 0):
    return [{"obs": np.full(2, start + i, np.float32), "action": np.int64(i % 2), "reward": reward,
             "next_obs": np.zeros(2, np.float32), "done": False} for i in range(n)]


def make(fraction: float = 0.25, seed: int = 0) -> DemoMixBuffer:
    demo = NaiveReplayBuffer({"replay_buffer_size": 50}, seed=seed + 1)
    demo.push(items(50, 1.0, start=1000))
    return DemoMixBuffer(NaiveReplayBuffer({"replay_buffer_size": 100}, seed=seed), demo, fraction)


def test_fraction_order_and_pushes_to_the_agent():
    buf = make(0.25)
    assert buf.count() == 0 and buf.sample_batch(8) is None  # the agent has nothing yet
    buf.push(items(5, 0.0))
    assert buf.count() == 5 and buf.sample_batch(8) is None  # 6 agent samples needed
    buf.push(items(10, 0.0, start=5))
    batch = buf.sample_batch(8)
    assert batch["reward"].tolist() == [1.0, 1.0] + [0.0] * 6
    assert (batch["obs"][:2, 0] >= 1000).all() and (batch["obs"][2:, 0] < 1000).all()
    assert buf.demo.count() == 50  # demonstrations are never pushed to


def test_state_round_trip_draws_the_same_batches():
    a = make(0.5)
    a.push(items(30, 0.0))
    a.sample_batch(10)
    b = make(0.5, seed=7)
    b.load_state_dict(a.state_dict())
    x, y = a.sample_batch(10), b.sample_batch(10)
    assert all(np.array_equal(x[k], y[k]) for k in x)


def test_fraction_out_of_range_is_refused():
    with pytest.raises(ConfigError, match="share of a batch must be in \\(0, 1\\), got 1.0"):
        make(1.0)
