"""Narrowing of values read back from plain data (checkpoint states, JSON files).

A ``state_dict()`` is a ``Dict[str, object]``: what ``load_state_dict`` reads of it is checked to be
what it must be, and a state that is not (a corrupt or foreign checkpoint) fails with a
``TypeError`` naming the key, instead of a wrong value travelling on.
"""

from __future__ import annotations

import numbers
from typing import Dict, List, Mapping, Optional

import torch


def _fail(what: str, expected: str, value: object) -> TypeError:
    return TypeError(f"{what} must be {expected}, got {type(value).__name__}: {value!r}")


def as_int(value: object, what: str) -> int:
    """``value`` as an int (Python or NumPy integers; not bools)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _fail(what, "an integer", value)
    return int(value)


def as_optional_int(value: object, what: str) -> Optional[int]:
    """``value`` as an int, or None."""
    return None if value is None else as_int(value, what)


def as_float(value: object, what: str) -> float:
    """``value`` as a float (any real number; not bools)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _fail(what, "a number", value)
    return float(value)


def as_mapping(value: object, what: str) -> Mapping[str, object]:
    """``value`` as a mapping with string keys (as ``state_dict`` writes them)."""
    if not isinstance(value, Mapping):
        raise _fail(what, "a dict", value)
    return value


def as_list(value: object, what: str) -> List[object]:
    """``value`` as a list."""
    if not isinstance(value, list):
        raise _fail(what, "a list", value)
    return value


def as_tensor(value: object, what: str) -> torch.Tensor:
    """``value`` as a tensor."""
    if not isinstance(value, torch.Tensor):
        raise _fail(what, "a tensor", value)
    return value


def as_tensors(value: object, what: str) -> Dict[str, torch.Tensor]:
    """``value`` as a dict of tensors by name (a state's columns)."""
    return {str(k): as_tensor(v, f"{what}[{k!r}]") for k, v in as_mapping(value, what).items()}


def as_number(value: object, what: str) -> float:
    """``value`` as a number: a Python int or float as it is, another real number as a float."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return as_float(value, what)


def as_numbers(value: object, what: str) -> Dict[str, float]:
    """``value`` as a dict of numbers by name (counters, rates; ints stay ints)."""
    return {str(k): as_number(v, f"{what}[{k!r}]") for k, v in as_mapping(value, what).items()}
