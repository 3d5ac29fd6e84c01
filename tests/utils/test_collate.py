"""stride.utils.data: default_collate / default_decollate on nested structures."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
import torch

from stride.utils.data import default_collate, default_decollate

Point = namedtuple("Point", ["x", "y"])


def _sample(i: int) -> dict:
    return {
        "obs": torch.full((2, 3), float(i)),
        "arr": np.arange(4, dtype=np.float32) + i,
        "iarr": np.array([i, -i], dtype=np.int32),
        "int": i,
        "float": 0.5 * i,
        "bool": i % 2 == 0,
        "np_scalar": np.float64(i) / 4,
        "nested": {"a": torch.tensor([i, i + 1]), "lst": [torch.tensor(float(i)), i * 10]},
        "tup": (torch.tensor([float(i)]), 2.0 * i),
        "point": Point(torch.tensor([i, 2 * i]), i + 100),
        "name": f"s{i}",
    }


def test_collate_stacks_on_new_first_dim_with_expected_dtypes():
    batch = default_collate([_sample(i) for i in range(3)])
    assert batch["obs"].shape == (3, 2, 3) and torch.equal(batch["obs"][2], torch.full((2, 3), 2.0))
    assert batch["arr"].shape == (3, 4) and batch["arr"].dtype == torch.float32
    assert batch["iarr"].dtype == torch.int32 and batch["iarr"][2].tolist() == [2, -2]
    assert batch["int"].dtype == torch.int64 and batch["int"].tolist() == [0, 1, 2]
    assert batch["float"].dtype == torch.float32 and batch["float"].tolist() == [0.0, 0.5, 1.0]
    assert batch["bool"].dtype == torch.bool and batch["bool"].tolist() == [True, False, True]
    assert batch["np_scalar"].tolist() == [0.0, 0.25, 0.5]
    assert batch["nested"]["a"].shape == (3, 2)
    assert isinstance(batch["nested"]["lst"], list) and batch["nested"]["lst"][1].tolist() == [0, 10, 20]
    assert isinstance(batch["point"], Point) and batch["point"].x.shape == (3, 2)
    assert batch["point"].y.tolist() == [100, 101, 102]
    assert batch["tup"][0].shape == (3, 1)  # shape (1,) stacks to (B, 1): no silent cat
    assert batch["name"] == ["s0", "s1", "s2"]


def _same(a, b) -> None:
    """Value equality between an original sample leaf and its round-tripped counterpart."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, tuple) and hasattr(a, "_fields"):
        assert type(b) is type(a)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and b.shape == a.shape and torch.equal(b, a)
    elif isinstance(a, np.ndarray):
        assert tuple(b.shape) == a.shape and np.array_equal(np.asarray(b), a)
    elif isinstance(a, str):
        assert b == a
    else:  # python / numpy scalars come back as 0-dim tensors of the same value
        assert torch.as_tensor(b).dim() == 0 and float(b) == pytest.approx(float(a), rel=1e-6)
        if isinstance(a, bool):
            assert b.dtype == torch.bool
        elif isinstance(a, int):
            assert b.dtype == torch.int64


def test_round_trip_values():
    samples = [_sample(i) for i in range(4)]
    back = default_decollate(default_collate(samples))
    assert len(back) == 4
    for s, b in zip(samples, back):
        _same(s, b)


def test_round_trip_is_exact_for_tensor_structures():
    samples = [{"x": torch.randn(3), "p": Point(torch.randn(2, 2), torch.randn(1))} for _ in range(5)]
    again = default_collate(default_decollate(default_collate(samples)))
    first = default_collate(samples)
    assert torch.equal(again["x"], first["x"]) and torch.equal(again["p"].x, first["p"].x)
    assert again["p"].y.shape == (5, 1)


def test_tuple_field_round_trips_as_tuple():
    samples = [{"t": (torch.tensor([1.0]), torch.tensor([2.0]))} for _ in range(2)]
    back = default_decollate(default_collate(samples))
    assert isinstance(back[0]["t"], tuple)


def test_list_of_lists_collates_column_wise():
    batch = default_collate([[torch.tensor(1), torch.tensor(2)], [torch.tensor(3), torch.tensor(4)]])
    assert [t.tolist() for t in batch] == [[1, 3], [2, 4]]
    back = default_decollate(batch)
    assert [[int(v) for v in s] for s in back] == [[1, 2], [3, 4]]


def test_errors():
    with pytest.raises(ValueError):
        default_collate([])
    with pytest.raises(TypeError):
        default_collate([np.array([object()], dtype=object)])
    with pytest.raises(TypeError):
        default_collate([object(), object()])
    with pytest.raises(ValueError):
        default_collate([[1, 2], [3]])
    with pytest.raises(ValueError):
        default_decollate({"a": torch.zeros(3), "b": torch.zeros(2)})
    with pytest.raises(TypeError):
        default_decollate(5)


def test_decollate_numpy_and_scalar_list():
    assert [a.tolist() for a in default_decollate(np.arange(6).reshape(3, 2))] == [[0, 1], [2, 3], [4, 5]]
    assert default_decollate(["a", "b"]) == ["a", "b"]
