"""Dict-of-array fields (PettingZoo's ``{'observation', 'action_mask'}`` observations) in replay: one
numeric column per key on every write and read path, and through save / load."""

from __future__ import annotations

import numpy as np

from stride.data.storage import ColumnStorage
from stride.worker import NaiveReplayBuffer


def _item(i):
    return {"obs": {"observation": np.full((3, 3, 2), i % 2, np.int8), "action_mask": np.eye(9, dtype=np.int8)[i % 9]},
            "action": i % 9, "reward": float(i), "done": False,
            "next_obs": {"observation": np.zeros((3, 3, 2), np.int8), "action_mask": np.ones(9, np.int8)}}


def test_dict_fields_are_numeric_columns_read_back_as_dicts():
    s = ColumnStorage(8)
    s.append([_item(0), _item(1)])
    s.append_one(_item(2))
    assert s.columns["obs/observation"].dtype == np.int8 and s.columns["obs/action_mask"].shape == (8, 9)
    assert "obs" not in s.columns
    items = s.get_items(np.array([2, 0]))
    assert items[0]["obs"]["action_mask"].tolist() == np.eye(9, dtype=np.int8)[2].tolist() and items[1]["reward"] == 0.0
    cols = s.get_columns(np.array([0, 1, 2]))
    assert cols["obs"]["observation"].shape == (3, 3, 3, 2) and cols["next_obs"]["action_mask"].dtype == np.int8
    assert set(s.get_columns(np.array([1]), keys=["obs"])) == {"obs"}
    state = s.physical_state()  # no object column: checkpoints need no pickle
    t = ColumnStorage(8)
    t.load_physical_state(state["columns"], state["tail"])
    assert t.get_items(np.array([1]))[0]["obs"]["observation"].sum() == 18
    t.append_columns(cols)  # a gathered batch goes back in as it came out
    assert t.size == 6 and t.get_columns(np.array([5]))["obs"]["action_mask"].argmax() == 2


def test_a_buffer_saves_and_loads_dict_observations(tmp_path):
    buf = NaiveReplayBuffer(NaiveReplayBuffer.default_config())
    buf.push([_item(i) for i in range(5)], cur_collector_envstep=5)
    buf.save_data(str(tmp_path / "data"))
    other = NaiveReplayBuffer(NaiveReplayBuffer.default_config())
    other.load_data(str(tmp_path / "data"))
    got = other.sample(5, 0)
    assert sorted(int(d["obs"]["action_mask"].argmax()) for d in got) == [0, 1, 2, 3, 4]
