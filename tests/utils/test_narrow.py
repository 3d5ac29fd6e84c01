"""stride.utils.narrow: values read back from states are checked, and a foreign one names its key."""

import numpy as np
import pytest
import torch

from stride.utils.narrow import (
    as_float, as_int, as_list, as_mapping, as_number, as_numbers, as_optional_int, as_tensor, as_tensors,
)
from stride.utils.registry import Registry
from stride.utils.seed import get_rng_state, read_rng_state


def test_numbers_pass_and_others_name_the_key():
    assert as_int(np.int64(3), "k") == 3 and type(as_int(np.int64(3), "k")) is int
    assert as_optional_int(None, "k") is None
    assert as_float(2, "k") == 2.0 and as_float(np.float32(0.5), "k") == 0.5
    assert type(as_number(5, "k")) is int and type(as_number(np.float32(1.5), "k")) is float
    with pytest.raises(TypeError, match="'envstep'"):
        as_int("7", "state 'envstep'")
    with pytest.raises(TypeError):
        as_int(True, "k")
    with pytest.raises(TypeError):
        as_float(None, "k")


def test_containers_and_tensors():
    assert as_mapping({"a": 1}, "k") == {"a": 1}
    assert as_list([1], "k") == [1]
    assert as_numbers({"a": 1, "b": np.float64(2.5)}, "k") == {"a": 1, "b": 2.5}
    t = torch.zeros(2)
    assert as_tensor(t, "k") is t and as_tensors({"x": t}, "k")["x"] is t
    with pytest.raises(TypeError, match=r"cols\['x'\]"):
        as_tensors({"x": [1, 2]}, "cols")
    with pytest.raises(TypeError):
        as_mapping([1], "k")


def test_a_checkpoint_rng_state_reads_back():
    state = get_rng_state()
    again = read_rng_state(state)
    assert again["python"] == state["python"] and torch.equal(again["torch"], state["torch"])
    with pytest.raises(TypeError):
        read_rng_state({"python": (), "numpy": {}, "torch": None})


def test_build_as_checks_what_is_built():
    r: Registry[type] = Registry("thing")
    r.register("int", int)
    assert r.build_as(int, "int", 3) == 3
    with pytest.raises(TypeError, match="thing 'int' built a int, not a str"):
        r.build_as(str, "int", 3)
