"""stride.data.storage.ColumnStorage: ring order, newest-kept overflow, column layout, persistence guard."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from stride.data.storage import ColumnStorage


def items(lo: int, hi: int) -> list:
    return [{"x": np.array([i, -i], dtype=np.float64), "i": i, "flag": i % 2 == 0} for i in range(lo, hi)]


def contents(s: ColumnStorage) -> list:
    return s.get_columns(s.valid_slots())["i"].tolist()


def test_capacity_must_be_positive():
    with pytest.raises(ValueError, match="capacity"):
        ColumnStorage(0)


def test_layout_from_first_item():
    s = ColumnStorage(5)
    s.append(items(0, 1))
    assert s.columns["x"].shape == (5, 2) and s.columns["x"].dtype == np.float32  # float64 stored as float32
    assert s.columns["i"].dtype == np.int64 and s.columns["flag"].dtype == np.bool_
    s2 = ColumnStorage(3)
    s2.append([{"t": torch.ones(2, 2, dtype=torch.float64), "name": "a", "meta": {"k": 1}}])
    assert s2.columns["t"].shape == (3, 2, 2) and s2.columns["t"].dtype == np.float32
    assert s2.columns["name"].dtype == object and s2.columns["meta"].dtype == object
    assert s2.get_items(np.array([0]))[0]["meta"] == {"k": 1}


def test_fifo_ring_overwrites_oldest():
    s = ColumnStorage(4)
    assert s.append(items(0, 3)).tolist() == [0, 1, 2]
    assert s.size == 3 and contents(s) == [0, 1, 2]
    assert s.append(items(3, 6)).tolist() == [3, 0, 1]
    assert s.size == 4 and s.tail == 2
    assert s.valid_slots().tolist() == [2, 3, 0, 1]
    assert contents(s) == [2, 3, 4, 5]
    s.append(items(6, 7))
    assert contents(s) == [3, 4, 5, 6]


def test_push_longer_than_capacity_keeps_newest():
    s = ColumnStorage(4)
    s.append(items(0, 1))
    slots = s.append(items(1, 11))
    assert len(slots) == 4 and s.size == 4
    assert contents(s) == [7, 8, 9, 10]
    assert s.get_columns(s.valid_slots())["x"][:, 1].tolist() == [-7, -8, -9, -10]


def test_get_items_and_columns_agree_and_are_copies():
    s = ColumnStorage(6)
    s.append(items(0, 6))
    slots = np.array([4, 1, 1])
    cols = s.get_columns(slots)
    its = s.get_items(slots)
    assert [it["i"] for it in its] == cols["i"].tolist() == [4, 1, 1]
    assert all(np.array_equal(it["x"], cols["x"][k]) for k, it in enumerate(its))
    cols["i"][0] = 99
    its[1]["x"][0] = 99
    assert its[2]["x"][0] == 1  # the same slot twice: two rows, each item its own
    assert s.get_columns(np.array([4, 1]))["i"].tolist() == [4, 1]
    assert s.get_columns(np.array([1]))["x"][0, 0] == 1
    assert set(s.get_columns(slots, keys=["i"])) == {"i"}


def test_field_mismatch_and_shape_mismatch():
    s = ColumnStorage(4)
    s.append(items(0, 1))
    with pytest.raises(ValueError, match=r"missing \['flag'\]"):
        s.append([{"x": np.zeros(2), "i": 1}])
    with pytest.raises(ValueError, match="unexpected"):
        s.append([{"x": np.zeros(2), "i": 1, "flag": True, "extra": 0}])
    with pytest.raises(ValueError, match="shape"):
        s.append([{"x": np.zeros(3), "i": 1, "flag": True}] * 2)
    assert s.append([]).tolist() == []


def test_append_columns():
    s = ColumnStorage(3)
    s.append(items(0, 2))
    cols = {"x": np.ones((4, 2), np.float32), "i": np.arange(10, 14), "flag": np.zeros(4, bool)}
    s.append_columns(cols)
    assert contents(s) == [11, 12, 13]


def test_numeric_state_oldest_first_and_refuses_objects():
    s = ColumnStorage(3)
    s.append(items(0, 5))
    st = s.numeric_state()
    assert st["i"].tolist() == [2, 3, 4]
    o = ColumnStorage(2)
    o.append([{"a": "text", "b": 1}])
    with pytest.raises(ValueError, match=r"\['a'\]"):
        o.numeric_state()


def test_clear():
    s = ColumnStorage(3)
    s.append([{"a": "x", "b": 1}])
    s.clear()
    assert s.size == 0 and s.tail == 0 and s.columns["a"][0] is None and s.valid_slots().tolist() == []
    s.append([{"a": "y", "b": 2}])
    assert s.get_items(s.valid_slots()) == [{"a": "y", "b": 2}]


def _stored_or_refused(s: ColumnStorage, items: list, key: str, expected: list) -> None:
    """Either the values are stored exactly, or the append is refused naming the field -- never silently changed."""
    before = s.size
    try:
        s.append(items)
    except ValueError as e:
        assert f"'{key}'" in str(e) and s.size == before
    else:
        got = s.get_columns(s.valid_slots()[-len(items):])[key]
        assert np.asarray(got).tolist() == expected


def test_later_float_into_int_column_not_silently_truncated():
    s = ColumnStorage(4)
    s.append([{"r": 1}])
    _stored_or_refused(s, [{"r": 0.5}], "r", [0.5])


def test_out_of_range_values_not_silently_wrapped():
    s = ColumnStorage(4)
    s.append([{"o": np.zeros(2, np.uint8)}])
    _stored_or_refused(s, [{"o": np.array([300, -1])}], "o", [[300, -1]])


def test_refused_batch_writes_nothing():
    s = ColumnStorage(2)
    s.append([{"a": 1, "b": np.zeros(2)}, {"a": 2, "b": np.ones(2)}])  # full ring
    before = {k: v.copy() for k, v in s.columns.items()}
    tail = s.tail
    with pytest.raises(ValueError, match="'b'"):
        s.append([{"a": 9, "b": np.zeros(3)}])  # 'a' is fine, 'b' has the wrong shape
    with pytest.raises((ValueError, KeyError), match="b"):
        s.append([{"a": 9, "b": np.zeros(2)}, {"a": 9}])  # the second item lacks 'b'
    assert s.tail == tail and s.size == 2
    for k, v in s.columns.items():
        assert np.array_equal(v, before[k]), k


def test_int_column_promoted_keeps_old_values():
    s = ColumnStorage(4)
    s.append([{"r": 1}, {"r": 2}])
    try:
        s.append([{"r": 0.5}])
    except ValueError as e:  # refusing is acceptable: then nothing is written
        assert "'r'" in str(e)
        expected = [1, 2]
    else:  # promoting is acceptable: old values unchanged, the new one exact
        expected = [1.0, 2.0, 0.5]
    assert s.get_columns(s.valid_slots())["r"].tolist() == expected


# ---- append_one: the single-item fast path has append's effects and errors ----------------------
_values = st.one_of(
    st.floats(-1e3, 1e3), st.integers(-(2**70), 2**70), st.booleans(),
    st.sampled_from([np.float32(1.5), np.float64(-2.25), np.int64(7), np.int32(-3), np.uint8(200), np.bool_(True)]),
    st.builds(lambda a: np.asarray(a, dtype=np.float32), st.lists(st.floats(-5, 5), min_size=2, max_size=2)),
    st.builds(lambda a: np.asarray(a, dtype=np.float64), st.lists(st.floats(-5, 5), min_size=2, max_size=2)),
    st.builds(lambda a: np.asarray(a, dtype=np.int64), st.lists(st.integers(-5, 300), min_size=2, max_size=3)),
    st.just("text"), st.just(None),
)


@settings(max_examples=60, deadline=None)
@given(first=st.fixed_dictionaries({"a": _values, "b": _values}), later=st.lists(
    st.fixed_dictionaries({"a": _values, "b": _values}), min_size=1, max_size=6), cap=st.integers(1, 4))
def test_append_one_equals_append(first, later, cap):
    fast, ref = ColumnStorage(cap), ColumnStorage(cap)
    try:
        ref.append([first])
    except (ValueError, TypeError, OverflowError) as e:
        with pytest.raises(type(e)):
            fast.append_one(first)
        return
    assert fast.append_one(first) == 0
    for it in later:
        try:
            slot = int(ref.append([it])[0])
        except (ValueError, TypeError, OverflowError) as e:
            with pytest.raises(type(e)):
                fast.append_one(it)
        else:
            assert fast.append_one(it) == slot
        assert (fast.tail, fast.size) == (ref.tail, ref.size)
        assert fast.columns.keys() == ref.columns.keys()
        for k in ref.columns:
            assert fast.columns[k].dtype == ref.columns[k].dtype, k
            f, r = fast.columns[k], ref.columns[k]
            assert (f.tolist() == r.tolist()) if f.dtype == object else np.array_equal(f, r, equal_nan=True), k


def test_append_one_field_mismatch():
    s = ColumnStorage(3)
    s.append_one({"x": np.zeros(2, np.float32), "i": 1})
    with pytest.raises(ValueError, match=r"missing \['i'\]"):
        s.append_one({"x": np.zeros(2, np.float32), "j": 1})
    with pytest.raises(ValueError, match="unexpected"):
        s.append_one({"x": np.zeros(2, np.float32), "i": 1, "k": 2})
    with pytest.raises(ValueError, match="shape"):
        s.append_one({"x": np.zeros(3, np.float32), "i": 1})
    assert s.size == 1 and s.tail == 1


# ---- list-of-dicts items: plain dicts that collate like the column batch ----------------------------
def test_get_items_types_keys_and_collate():
    from stride.utils.data.collate_fn import default_collate

    s = ColumnStorage(8)
    odd = "key with 'quotes' \"and\" \\ ünïcode"
    s.append([{"obs": np.full(3, i, np.float32), "a": i, "r": i / 2, "d": i % 2 == 0, "u8": np.uint8(i),
               "i32": np.int32(-i), odd: float(i), "obj": {"k": i}} for i in range(8)])
    slots = np.array([5, 2, 2, 7])
    its = s.get_items(slots, ("replay_unique_id", "replay_buffer_idx"), ([50, 20, 20, 70], slots.tolist()))
    cols = s.get_columns(slots)
    assert all(type(d) is dict for d in its)
    assert list(its[0]) == [*cols, "replay_unique_id", "replay_buffer_idx"]
    assert [d["replay_unique_id"] for d in its] == [50, 20, 20, 70]
    assert type(its[0]["a"]) is int and type(its[0]["r"]) is float and type(its[0]["d"]) is bool
    assert type(its[0]["u8"]) is np.uint8 and type(its[0]["i32"]) is np.int32  # other dtypes stay NumPy scalars
    assert its[0]["obj"] == {"k": 5} and its[0][odd] == 5.0
    assert its[1]["obs"] is not its[2]["obs"] and its[1]["obs"].base is not None  # rows of one gathered copy
    batch = default_collate([{k: v for k, v in d.items() if k != "obj"} for d in its])
    for k, c in cols.items():
        if k != "obj":
            assert batch[k].numpy().dtype == c.dtype and np.array_equal(batch[k].numpy(), c), k
    s.append([{"obs": np.zeros(3, np.float32), "a": 0.5, "r": 0.0, "d": True, "u8": np.uint8(0),
               "i32": np.int32(0), odd: 0.0, "obj": None}])  # 'a' promoted to float: a new item builder
    assert type(s.get_items(np.array([0]))[0]["a"]) is np.float64  # (int64 -> float64: not tolist any more)


def test_items_and_columns_follow_replaced_column_arrays():
    """The compiled item builder / column gather are bound to the column arrays: a restore or a
    promotion that replaces them must be seen by the next sample."""
    s = ColumnStorage(4)
    s.append(items(0, 4))
    slots = np.array([2, 0])
    assert [it["i"] for it in s.get_items(slots)] == [2, 0] and s.get_columns(slots)["i"].tolist() == [2, 0]
    state = s.physical_state()
    state["columns"]["i"] = state["columns"]["i"] + 100
    s.load_physical_state(state["columns"], state["tail"])
    assert [it["i"] for it in s.get_items(slots)] == [102, 100] and s.get_columns(slots)["i"].tolist() == [102, 100]
    s.columns = {k: v.copy() for k, v in s.columns.items()}
    s.columns["i"][2] = -5  # (the new array, not a copy of it, is what is read)
    assert [it["i"] for it in s.get_items(slots)] == [-5, 100] and s.get_columns(slots)["i"].tolist() == [-5, 100]
    s.append([{"x": np.zeros(2), "i": 1.5, "flag": True}])  # int column promoted to float: a new array
    assert [it["i"] for it in s.get_items(np.array([0, 2]))] == [1.5, -5.0]
    assert s.get_columns(np.array([0]))["i"].dtype == np.float64
