"""tools/any_count.py: which signatures count as using Any."""

from __future__ import annotations

import importlib.util
import os
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import numpy.typing as npt

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "any_count.py")
_spec = importlib.util.spec_from_file_location("any_count", _PATH)
assert _spec is not None and _spec.loader is not None
any_count = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(any_count)


def typed(x: int, y: Optional[List[str]] = None) -> Dict[str, float]:
    return {}


def nested_any(x: Dict[str, Any]) -> None:
    pass


def bare(x: dict) -> None:  # type: ignore[type-arg]
    pass


def unannotated(x, y: int) -> None:  # type: ignore[no-untyped-def]
    pass


def callback(fn: Callable[[Dict[str, Any]], None]) -> None:
    pass


def typed_callback(fn: Callable[[Dict[str, object]], None]) -> Callable[..., object]:
    return fn


def array(x: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    return np.zeros(1, np.int64)


def test_what_counts_as_any():
    assert not any_count.uses_any(typed)
    assert any_count.uses_any(nested_any)
    assert any_count.uses_any(bare)
    assert any_count.uses_any(unannotated)
    assert any_count.uses_any(callback)  # Any among a Callable's parameters
    assert not any_count.uses_any(typed_callback)
    assert not any_count.uses_any(array)  # NDArray's any-shape is not an Any of ours


def test_counts_the_public_signatures_of_a_package():
    total, n_any, names = any_count.count(["stride.rl_utils"])
    assert total > 0 and n_any == len(names) and n_any <= total


def test_the_default_covers_every_package_of_stride():
    import pkgutil

    import stride

    subpackages = {f"stride.{m.name}" for m in pkgutil.iter_modules(stride.__path__) if m.ispkg}
    assert set(any_count.DEFAULT_PACKAGES) == subpackages
