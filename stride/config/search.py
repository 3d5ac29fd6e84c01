"""Hyper-parameter search spaces as data, declared by each policy next to its defaults.

A policy's ``search_space`` maps a key of its config (dotted, relative to the ``policy`` section:
``'learn.learning_rate'``) to one of :class:`FloatRange`, :class:`IntRange` or :class:`Choice`.
``stride -m tune`` turns them into Optuna suggestions; nothing here imports Optuna, so a space can
be read, checked and tested without it. rl-zoo3 keeps its spaces in one file of sampler functions
per algorithm, apart from the defaults they perturb (they drift apart); here the space sits in the
policy's class, and :func:`check_search_space` fails on a key the policy's config does not have.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass
from typing import Mapping, Optional, Tuple, Union

from ..utils.errors import ConfigError
from .config import get_dotted


@dataclass(frozen=True)
class FloatRange:
    """A float in ``[low, high]``; ``log`` samples its logarithm uniformly (learning rates)."""

    low: float
    high: float
    log: bool = False

    def __post_init__(self) -> None:
        _check_range(self.low, self.high, self.log)


@dataclass(frozen=True)
class IntRange:
    """An int in ``[low, high]`` (both included); ``log`` samples its logarithm uniformly."""

    low: int
    high: int
    log: bool = False

    def __post_init__(self) -> None:
        if not (isinstance(self.low, int) and isinstance(self.high, int)):
            raise ConfigError(f"IntRange bounds must be ints, got {self.low!r}, {self.high!r}")
        _check_range(self.low, self.high, self.log)


#: what a sampler stores for a choice (Optuna's storages keep these types only)
Label = Union[None, bool, int, float, str]


@dataclass(frozen=True)
class Choice:
    """One of the given values (numbers, strings, None, or tuples/lists such as layer sizes).

    A sampler stores each value as its *label* (:attr:`labels`): the value itself where it is None,
    a bool, a number or a string, else its JSON text (``[64, 64]``) -- Optuna's storages keep plain
    labels only (rl-zoo3 names its layer lists 'tiny' / 'small' by hand in each sampler function
    and maps them back there). :meth:`encode` / :meth:`decode` go between values and labels; a list
    and a tuple of the same items are the same value."""

    values: Tuple[object, ...]
    labels: Tuple[Label, ...]

    def __init__(self, *values: object) -> None:
        if not values:
            raise ConfigError("Choice needs at least one value")
        labels = tuple(_label(v) for v in values)
        if len(set(map(repr, labels))) < len(labels):
            raise ConfigError(f"Choice values must differ, got {list(values)!r}")
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "labels", labels)

    def encode(self, value: object) -> Optional[Label]:
        """The label of ``value``, or None where it is not one of the values (None itself is
        labelled None: tell them apart with ``value in choice``)."""
        i = self._index(value)
        return None if i is None else self.labels[i]

    def __contains__(self, value: object) -> bool:
        return self._index(value) is not None

    def decode(self, label: Label) -> object:
        """The value (a copy) whose label is ``label``; one line naming it and the labels otherwise."""
        for v, own in zip(self.values, self.labels):
            if own == label and type(own) is type(label):
                return copy.deepcopy(v)
        raise ConfigError(f"{label!r} is not a label of this choice; labels: {', '.join(map(repr, self.labels))}")

    def _index(self, value: object) -> Optional[int]:
        key = _same(value)
        for i, v in enumerate(self.values):
            own = _same(v)
            if own == key and type(own) is type(key):
                return i
        return None


SearchParam = Union[FloatRange, IntRange, Choice]
#: dotted config key (relative to the ``policy`` section) -> where to search it
SearchSpace = Mapping[str, SearchParam]


def _label(value: object) -> Label:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(_same(value), default=repr)


def _same(value: object) -> object:
    """``value`` with every tuple a list (a list and a tuple of equal items are one choice)."""
    if isinstance(value, (list, tuple)):
        return [_same(v) for v in value]
    return value


def _check_range(low: float, high: float, log: bool) -> None:
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ConfigError(f"a search range needs finite low < high, got [{low}, {high}]")
    if log and low <= 0:
        raise ConfigError(f"a log search range needs low > 0, got [{low}, {high}]")


def check_search_space(space: SearchSpace, policy_config: Mapping[str, object], policy_type: str) -> None:
    """Every key of ``space`` names a setting of the policy's config (its defaults merged with the
    user's); an unknown key is one line naming it and the policy."""
    missing = object()
    for key in space:
        if get_dotted(policy_config, key, missing) is missing:
            raise ConfigError(f"search space of policy '{policy_type}': 'policy.{key}' is not a setting of its config")
