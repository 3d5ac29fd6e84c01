"""stride.data.buffer.EpisodeReplayBuffer: episodes in, episodes out, FIFO, episode_len, persistence."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
import torch

from stride.data import EpisodeReplayBuffer, create_buffer
from stride.utils.errors import ConfigError
from stride.worker import EpisodeReplayBuffer as WorkerEpisode
from .stats_refs import with_ids


def episode(k: int, length: int) -> list:
    return [{"obs": np.full(2, 100 * k + t, dtype=np.float32), "action": t % 2, "reward": float(t),
             "done": t == length - 1} for t in range(length)]


def firsts(b: EpisodeReplayBuffer) -> list:
    return [int(b.episode_at(s)["obs"][0, 0]) // 100 for s in b.slots().tolist()]


def test_config_registry_and_exports():
    cfg = EpisodeReplayBuffer.default_config()
    assert cfg["type"] == "episode" and cfg["replay_buffer_size"] > 0
    assert isinstance(create_buffer({"type": "episode", "replay_buffer_size": 3}), EpisodeReplayBuffer)
    assert WorkerEpisode is EpisodeReplayBuffer
    with pytest.raises(ConfigError, match="replay_buffer_sise"):
        EpisodeReplayBuffer({"replay_buffer_sise": 3})


def test_push_one_or_many_fifo_and_episode_len():
    b = EpisodeReplayBuffer({"replay_buffer_size": 3}, seed=0)
    b.push(episode(0, 4))
    b.push([episode(1, 2), episode(2, 5)])
    assert b.count() == 3 and b.episode_len == [4, 2, 5] and b.transition_count() == 11
    b.push([episode(3, 1), [], episode(4, 3)])  # the empty episode is skipped
    assert firsts(b) == [2, 3, 4] and b.episode_len == [5, 1, 3]
    b.push([episode(k, 2) for k in range(10, 15)])  # longer than the capacity: newest kept
    assert firsts(b) == [12, 13, 14]
    assert b.unique_ids[b.slots()].tolist() == [7, 8, 9]
    with pytest.raises(TypeError):
        b.push({"obs": 1})


def test_sample_returns_whole_episodes_as_copies():
    b = EpisodeReplayBuffer({"replay_buffer_size": 5}, seed=1)
    assert b.sample(1) is None
    for k in range(4):
        b.push(episode(k, k + 2))
    eps = b.sample(4) + b.sample(4)
    assert len(eps) == 8
    for ep in eps:
        k = int(ep[0]["obs"][0]) // 100
        assert len(ep) == k + 2
        assert [int(t["obs"][0]) for t in ep] == [100 * k + t for t in range(k + 2)]
        assert all(t["replay_unique_id"] == k and t["replay_buffer_idx"] == k for t in ep)
        assert ep[-1]["done"] and not any(t["done"] for t in ep[:-1])
    eps[0][0]["obs"][0] = -1  # a copy: the stored episode is untouched
    assert all((b.episode_at(s)["obs"] >= 0).all() for s in range(4))
    batch = with_ids(b.sample_batch(3))
    assert all(ep["obs"].shape == (ep["replay_unique_id"] + 2, 2) for ep in batch)
    assert b.sample(5) is None
    b.update({"priority": [1.0]})  # ignored


def test_min_sample_size_and_clear():
    b = EpisodeReplayBuffer({"replay_buffer_size": 5, "min_sample_size": 3}, seed=0)
    b.push([episode(0, 2), episode(1, 2)])
    assert b.sample(1) is None
    b.push(episode(2, 2))
    assert b.sample(1) is not None
    b.clear()
    assert b.count() == 0 and b.episode_len == [] and b.sample(1) is None


def test_save_load_npz_no_pickle(tmp_path):
    a = EpisodeReplayBuffer({"replay_buffer_size": 3}, seed=0)
    a.push([episode(k, k + 1) for k in range(5)])
    path = str(tmp_path / "ep.npz")
    a.save_data(path)
    with zipfile.ZipFile(path) as z:
        assert all(n.endswith(".npy") for n in z.namelist())
    b = EpisodeReplayBuffer({"replay_buffer_size": 3}, seed=0)
    b.load_data(path)
    assert firsts(b) == firsts(a) == [2, 3, 4] and b.episode_len == a.episode_len == [3, 4, 5]
    assert b.unique_ids[b.slots()].tolist() == [2, 3, 4]
    b.push(episode(9, 1))
    assert b.unique_ids[b.slots()].tolist() == [3, 4, 5]
    small = EpisodeReplayBuffer({"replay_buffer_size": 2})
    small.load_data(path)
    assert firsts(small) == [3, 4]
    bad = EpisodeReplayBuffer({"replay_buffer_size": 2})
    bad.push([{"obs": 1, "info": {"x": 1}}])
    with pytest.raises(ValueError, match="info"):
        bad.save_data(str(tmp_path / "bad.npz"))


def test_state_dict_exact_resume(tmp_path):
    a = EpisodeReplayBuffer({"replay_buffer_size": 4}, seed=3)
    a.push([episode(k, 1 + k % 3) for k in range(6)])
    a.sample(2)
    torch.save(a.state_dict(), tmp_path / "s.pt")
    b = EpisodeReplayBuffer({"replay_buffer_size": 4}, seed=7)
    b.load_state_dict(torch.load(tmp_path / "s.pt", weights_only=True))
    for k in range(5):
        ea, eb = a.sample(3), b.sample(3)
        assert [[int(t["obs"][0]) for t in ep] for ep in ea] == [[int(t["obs"][0]) for t in ep] for ep in eb]
        a.push(episode(20 + k, 2))
        b.push(episode(20 + k, 2))
    assert firsts(a) == firsts(b) and a.episode_len == b.episode_len


def goal_episode(k: int, length: int) -> list:
    """Goal-conditioned transitions (Gymnasium-Robotics' dict observations), as HER stores them."""
    def obs(t: int) -> dict:
        return {"observation": np.full(3, 10 * k + t, dtype=np.float32), "achieved_goal": np.full(3, t, dtype=np.float32),
                "desired_goal": np.full(3, -k, dtype=np.float32)}
    return [{"obs": obs(t), "action": t, "reward": 0.0, "next_obs": obs(t + 1), "done": False} for t in range(length)]


def test_dict_observations_are_columns_per_key_and_survive_checkpoints(tmp_path):
    b = EpisodeReplayBuffer({"replay_buffer_size": 4}, seed=0)
    b.push([goal_episode(1, 3), goal_episode(2, 2)])
    stored = b.episode_at(int(b.slots()[0]))
    assert stored["obs/desired_goal"].shape == (3, 3) and stored["obs/desired_goal"].dtype == np.float32
    cols = {ep["obs"]["observation"][0, 0]: ep for ep in with_ids(b.sample_batch(2))}
    np.testing.assert_array_equal(cols[10.0]["next_obs"]["achieved_goal"][:, 0], [1, 2, 3])
    np.testing.assert_array_equal(cols[20.0]["obs"]["desired_goal"], np.full((2, 3), -2))
    items = b.sample(1)[0]
    assert set(items[0]["obs"]) == {"observation", "achieved_goal", "desired_goal"}
    # a checkpoint (state_dict) and a data file hold the same episodes, no pickle needed
    c = EpisodeReplayBuffer({"replay_buffer_size": 4}, seed=0)
    c.load_state_dict(b.state_dict())
    b.save_data(str(tmp_path / "eps.npz"))
    d = EpisodeReplayBuffer({"replay_buffer_size": 4})
    d.load_data(str(tmp_path / "eps.npz"))
    for other in (c, d):
        assert other.episode_len == [3, 2]
        for s in other.slots().tolist():
            for key, value in other.episode_at(s).items():
                np.testing.assert_array_equal(value, b.episode_at(s)[key])
