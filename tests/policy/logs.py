"""A learn step's log as numbers: policies return losses as detached tensors (read by the learner's
log hook at its frequency, not every step), which these tests compare as floats."""

from __future__ import annotations

from typing import Dict, Mapping


def numbers(log: Mapping[str, object]) -> Dict[str, float]:
    """Every scalar of ``log`` as a float (``priority``, an array, left out)."""
    return {k: float(v) for k, v in log.items() if k != "priority"}  # type: ignore[arg-type]
