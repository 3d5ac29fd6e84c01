"""stride.data.buffer.NaiveReplayBuffer: FIFO, ids, sample vs sample_batch, npz persistence, state_dict."""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np
import pytest
import torch

from stride.data import NaiveReplayBuffer, create_buffer
from stride.utils.errors import ConfigError, UnknownNameError
from .stats_refs import with_ids


def item(i: int) -> dict:
    return {"obs": np.full(3, i, dtype=np.float32), "action": i % 4, "reward": float(i) / 2, "done": i % 5 == 0}


def buf(cap: int = 10, seed: int = 0, **cfg) -> NaiveReplayBuffer:
    return NaiveReplayBuffer({"replay_buffer_size": cap, **cfg}, seed=seed)


def ids_in(b: NaiveReplayBuffer) -> list:
    order = b.storage.valid_slots()
    return b.storage.get_columns(order)["action"].tolist(), b.unique_ids[order].tolist()


def test_default_config_and_unknown_key():
    cfg = NaiveReplayBuffer.default_config()
    assert cfg["type"] == "naive" and cfg["replay_buffer_size"] > 0 and "min_sample_size" in cfg
    with pytest.raises(ConfigError, match="replay_buffer_sise"):
        NaiveReplayBuffer({"replay_buffer_sise": 3})
    assert isinstance(create_buffer({"type": "naive", "replay_buffer_size": 3}), NaiveReplayBuffer)
    with pytest.raises(UnknownNameError, match="valid choices"):
        create_buffer({"type": "naiv"})


def test_push_one_and_many_count_and_fifo():
    b = buf(4)
    b.push(item(0))
    b.push([item(i) for i in range(1, 3)])
    assert b.count() == len(b) == 3
    for i in range(3, 7):
        b.push(item(i))
    assert b.count() == 4 and b.push_count == 7
    _, ids = ids_in(b)
    assert ids == [3, 4, 5, 6]  # oldest overwritten first, ids count pushes


def test_push_longer_than_capacity_keeps_newest():
    b = buf(4)
    b.push(item(0))
    b.push([item(i) for i in range(1, 11)])
    _, ids = ids_in(b)
    assert ids == [7, 8, 9, 10] and b.push_count == 11
    got = [int(d["replay_unique_id"]) for _ in range(50) for d in b.sample(4)]
    assert set(got) == {7, 8, 9, 10}
    assert all(d["obs"][0] == d["replay_unique_id"] for d in b.sample(4))


def test_sample_items_carry_ids_and_match_storage():
    b = buf(8, seed=1)
    b.push([item(i) for i in range(12)])  # wraps
    b.push([item(i) for i in range(12, 14)])
    out = [d for _ in range(5) for d in b.sample(8)]
    assert len(out) == 40 and len(b.sample(8)) == 8
    for d in out:
        assert set(d) == {"obs", "action", "reward", "done", "replay_unique_id", "replay_buffer_idx"}
        uid = d["replay_unique_id"]
        assert 6 <= uid < 14 and d["obs"].tolist() == [uid] * 3 and d["reward"] == pytest.approx(uid / 2)
        assert b.unique_ids[d["replay_buffer_idx"]] == uid


def test_sample_and_sample_batch_agree():
    a, b = buf(8, seed=3), buf(8, seed=3)
    for x in (a, b):
        x.push([item(i) for i in range(11)])
    for _ in range(3):
        items, cols = a.sample(5), with_ids(b.sample_batch(5))
        assert cols["obs"].shape == (5, 3) and cols["obs"].dtype == np.float32
        for k in ("obs", "action", "reward", "done", "replay_unique_id", "replay_buffer_idx"):
            assert np.array_equal(np.stack([np.asarray(d[k]) for d in items]), np.asarray(cols[k])), k


def test_none_when_too_few():
    """A batch never asks for more items than the buffer holds (API: None then), nor below min_sample_size."""
    b = buf(10, min_sample_size=5)
    assert b.sample(1) is None and with_ids(b.sample_batch(1)) is None
    b.push([item(i) for i in range(3)])
    assert b.sample(4) is None and with_ids(b.sample_batch(4)) is None
    assert b.sample(3) is None  # min_sample_size not reached
    b.push([item(i) for i in range(3, 5)])
    assert len(b.sample(3)) == 3 and with_ids(b.sample_batch(5))["obs"].shape == (5, 3)


def test_sampled_items_can_be_pushed_again():
    b = buf(10)
    b.push([item(i) for i in range(3)])
    again = b.sample(2)
    b.push(again)  # meta keys are stripped, new ids given
    assert b.count() == 5 and sorted(ids_in(b)[1]) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("replace", [False, True])
def test_sampling_is_uniform_over_contents(replace):
    b = buf(5, seed=0, replace=replace)
    b.push([item(i) for i in range(5)])
    ids = np.concatenate([with_ids(b.sample_batch(2))["replay_unique_id"] for _ in range(1000)])
    freq = np.bincount(ids, minlength=5) / len(ids)
    assert np.all(np.abs(freq - 0.2) < 0.03), freq  # (sd ~0.006)


def test_update_is_a_no_op_and_clear():
    b = buf(5)
    b.push([item(i) for i in range(3)])
    b.update({"replay_unique_id": [0], "replay_buffer_idx": [0], "priority": [10.0]})
    assert b.count() == 3
    b.clear()
    assert b.count() == 0 and b.sample(1) is None
    b.push(item(9))
    assert b.sample(1)[0]["action"] == 1


def test_save_load_data_npz_round_trip(tmp_path):
    b = buf(6, seed=0)
    b.push([item(i) for i in range(4)])
    b.push([item(i) for i in range(4, 9)])  # wrapped: contents 3..8
    path = str(tmp_path / "buffer.npz")
    b.save_data(path)
    assert os.listdir(tmp_path) == ["buffer.npz"]  # no temp file left
    with np.load(path, allow_pickle=False) as f:  # readable without pickle
        assert f["col/action"].tolist() == [i % 4 for i in range(3, 9)]
    with zipfile.ZipFile(path) as z:  # every member is a plain .npy array
        for name in z.namelist():
            np.lib.format.read_array(io.BytesIO(z.read(name)), allow_pickle=False)
    c = buf(6, seed=5)
    c.push(item(100))
    c.load_data(path)
    assert c.count() == 6
    assert ids_in(c)[1] == [3, 4, 5, 6, 7, 8]
    for d in c.sample(6):
        assert d["obs"].tolist() == [d["replay_unique_id"]] * 3
    c.push(item(9))  # ids continue after the saved ones
    assert ids_in(c)[1][-1] == 9 and 3 not in ids_in(c)[1]


def test_save_data_refuses_object_fields(tmp_path):
    b = buf(3)
    b.push({"text": "hello", "x": 1})
    with pytest.raises(ValueError, match="pickle"):
        b.save_data(str(tmp_path / "b.npz"))
    assert os.listdir(tmp_path) == []


def test_save_load_empty(tmp_path):
    b = buf(3)
    b.save_data(str(tmp_path / "e.npz"))
    c = buf(3)
    c.load_data(str(tmp_path / "e.npz"))
    assert c.count() == 0


def _roundtrip(sd: dict) -> dict:
    f = io.BytesIO()
    torch.save(sd, f)
    f.seek(0)
    return torch.load(f, weights_only=True)


def test_state_dict_round_trip_continues_sampling_before_wrap():
    a = buf(10, seed=7)
    a.push([item(i) for i in range(6)])
    a.sample(3)
    b = buf(10, seed=0)
    b.load_state_dict(_roundtrip(a.state_dict()))
    assert b.count() == 6 and b.push_count == 6
    for _ in range(3):
        x, y = with_ids(a.sample_batch(4)), with_ids(b.sample_batch(4))
        assert x["replay_unique_id"].tolist() == y["replay_unique_id"].tolist()
    a.push(item(6))
    b.push(item(6))
    assert with_ids(a.sample_batch(7))["replay_unique_id"].tolist() == with_ids(b.sample_batch(7))["replay_unique_id"].tolist()


def test_state_dict_round_trip_continues_sampling_after_wrap():
    a = buf(5, seed=7)
    for i in range(7):  # one at a time: the ring wraps (tail != 0)
        a.push(item(i))
    b = buf(5, seed=0)
    b.load_state_dict(_roundtrip(a.state_dict()))
    assert ids_in(b)[1] == ids_in(a)[1]
    for _ in range(3):
        assert with_ids(a.sample_batch(4))["replay_unique_id"].tolist() == with_ids(b.sample_batch(4))["replay_unique_id"].tolist()
