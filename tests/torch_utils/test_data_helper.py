"""stride.torch_utils: to_tensor, to_device, to_ndarray over nested structures."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
import torch

from stride.torch_utils import to_device, to_ndarray, to_tensor

Pair = namedtuple("Pair", ["a", "b"])


def test_to_tensor_dtypes():
    out = to_tensor({
        "f64": np.ones(3, dtype=np.float64),
        "f32": np.ones(2, dtype=np.float32),
        "i64": np.arange(3, dtype=np.int64),
        "u8": np.zeros((2, 2), dtype=np.uint8),
        "int": 5,
        "float": 2.5,
        "np_int": np.int32(7),
        "np_float": np.float64(1.5),
        "ints": [1, 2, 3],
        "floats": [0.5, 1.5],
    })
    assert out["f64"].dtype == torch.float32 and out["f64"].tolist() == [1.0, 1.0, 1.0]
    assert out["f32"].dtype == torch.float32
    assert out["i64"].dtype == torch.int64 and out["i64"].tolist() == [0, 1, 2]
    assert out["u8"].dtype == torch.uint8
    assert out["int"].dtype == torch.int64 and out["int"].item() == 5
    assert out["float"].dtype == torch.float32 and out["float"].item() == 2.5
    assert out["np_int"].dtype == torch.int64 and out["np_int"].item() == 7
    assert out["np_float"].dtype == torch.float32 and out["np_float"].item() == 1.5
    assert out["ints"].dtype == torch.int64 and out["ints"].tolist() == [1, 2, 3]
    assert out["floats"].dtype == torch.float32 and out["floats"].tolist() == [0.5, 1.5]


def test_to_tensor_nested_keeps_structure_and_leaves_others():
    x = {"p": Pair(np.zeros(2), [np.ones(1), "s"]), "t": (np.int64(3), None), "flag": True, "keep": np.ones(2)}
    out = to_tensor(x, ignore_keys=["keep"])
    assert isinstance(out["p"], Pair) and isinstance(out["p"].a, torch.Tensor)
    assert isinstance(out["p"].b, list) and isinstance(out["p"].b[0], torch.Tensor) and out["p"].b[1] == "s"
    assert isinstance(out["t"], tuple) and out["t"][0].item() == 3 and out["t"][1] is None
    assert out["flag"] is True
    assert isinstance(out["keep"], np.ndarray)


def test_to_tensor_explicit_dtype_and_noncontiguous():
    arr = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]
    t = to_tensor(arr, dtype=torch.float64)
    assert t.dtype == torch.float64 and t.tolist() == arr.tolist()
    assert to_tensor(torch.ones(2, dtype=torch.int32), dtype=torch.float32).dtype == torch.float32
    x = torch.ones(2)
    assert to_tensor(x) is x


def test_to_tensor_refuses_object_arrays_and_unknown_types():
    with pytest.raises(TypeError):
        to_tensor(np.array([object()], dtype=object))
    with pytest.raises(TypeError):
        to_tensor(object())


def test_to_device_nested():
    m = torch.nn.Linear(2, 2)
    data = {"a": torch.ones(2), "b": [torch.zeros(1), 3], "c": Pair(torch.ones(1), "x"), "m": m, "skip": torch.ones(1)}
    out = to_device(data, "cpu", ignore_keys=["skip"])
    assert out["a"].device.type == "cpu" and out["b"][1] == 3 and isinstance(out["c"], Pair)
    assert out["c"].b == "x" and out["m"] is m and out["skip"] is data["skip"]
    meta = to_device({"a": torch.ones(2), "n": [torch.zeros(1)]}, "meta")
    assert meta["a"].device.type == "meta" and meta["n"][0].device.type == "meta"


def test_to_ndarray_nested():
    out = to_ndarray({"a": torch.arange(3), "b": [torch.ones(2, requires_grad=True), 1], "c": (torch.zeros(1),)})
    assert isinstance(out["a"], np.ndarray) and out["a"].tolist() == [0, 1, 2]
    assert isinstance(out["b"][0], np.ndarray) and out["b"][1] == 1
    assert isinstance(out["c"], tuple) and isinstance(out["c"][0], np.ndarray)


def test_to_ndarray_namedtuple():
    out = to_ndarray(Pair(torch.ones(2), torch.zeros(1)))
    assert isinstance(out, Pair) and isinstance(out.a, np.ndarray)


def test_to_tensor_keeps_zero_dim_arrays_scalar():
    t = to_tensor({"r": np.array(3.0)})["r"]
    assert t.shape == () and t.item() == 3.0


def test_to_tensor_numpy_bool():
    out = to_tensor({"done": np.bool_(True), "flags": [np.bool_(False)]})
    assert bool(out["done"]) is True and torch.as_tensor(out["done"]).dtype == torch.bool
    assert bool(out["flags"][0]) is False


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_to_device_crosses_to_and_from_cuda_in_one_copy_each():
    """Host -> GPU: pinned, non-blocking, dtype kept (uint8 frames cross as bytes); GPU -> host: all
    tensors copied, then one wait, the values exact."""
    frames = torch.randint(0, 255, (2, 4, 84, 84), dtype=torch.uint8)
    on = to_device({"obs": frames, "n": [torch.arange(3)]}, "cuda")
    assert on["obs"].device.type == "cuda" and on["obs"].dtype == torch.uint8 and not frames.is_pinned()
    back = to_device(on, "cpu")
    assert torch.equal(back["obs"], frames) and torch.equal(back["n"][0], torch.arange(3))
    assert to_device(on, on["obs"].device)["obs"] is on["obs"]
