"""Exploration schedules."""

from __future__ import annotations

import math
from typing import Callable
from ..utils.errors import ConfigError


def get_epsilon_greedy_fn(start: float, end: float, decay: int, type_: str = "exp") -> Callable[[int], float]:
    """Epsilon as a function of env steps: ``'exp'`` = (start-end)*e^(-step/decay)+end; ``'linear'``
    goes from start to end over ``decay`` steps then stays."""
    if type_ == "exp":
        return lambda step: (start - end) * math.exp(-step / decay) + end
    if type_ == "linear":
        return lambda step: max(end, start - (start - end) * step / decay) if start >= end else min(end, start + (end - start) * step / decay)
    raise ConfigError(f"unknown epsilon schedule '{type_}'; valid choices: exp, linear")
