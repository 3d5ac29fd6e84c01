"""Schedules as data: a hyper-parameter's value as a function of a training counter.

A config value that may change during training (a learning rate, epsilon, an entropy weight, a
clip range) is either a number (constant) or a schedule dict::

    learning_rate=dict(type="linear", start=3e-4, end=0.0, steps=500, unit="train_iter")
    eps=dict(type="exp", start=0.95, end=0.1, decay=10000)               # unit: env_step (epsilon's)
    entropy_weight=dict(type="cosine", start=0.01, end=0.0, steps=1000, warmup=50)
    clip_ratio=dict(type="piecewise", points=[[0, 0.3], [200, 0.2], [400, 0.1]])

``step`` is the counter named by ``unit``: ``env_step`` (env steps collected) or ``train_iter``
(learner iterations); a key declares its default unit (:class:`Scheduled`). Every schedule takes an
optional ``scale`` that multiplies its value (``linear`` from 1 to 0 with ``scale=3e-4`` is
CleanRL's annealed learning rate, bit for bit).

- ``constant``: ``value``.
- ``linear``: ``start`` to ``end`` over ``steps`` steps, then ``end`` (``decay`` is accepted for
  ``steps``: epsilon's older spelling).
- ``exp``: ``(start - end) * exp(-step / decay) + end`` (epsilon's ``exp`` form, unchanged).
- ``cosine``: ``warmup`` steps (default 0) rising linearly from 0 to ``start``, then half a cosine
  from ``start`` to ``end`` over ``steps`` steps, then ``end``.
- ``piecewise``: ``points`` ``[[step, value], ...]`` (steps increasing), linear between them,
  the first / last value outside.

One mechanism for all of them: :class:`Schedules` holds a policy's schedules and counters (the
policy base class reads every value and writes every learning rate through it), the counters in
the policy's learn state dict. DI-engine has an epsilon
function, a separate ``lr_scheduler`` option on PPO only and nothing for other keys; SB3 takes a
Python callable of remaining progress (code, not data: it cannot be written to a JSON config or
checked before a run); Tianshou leaves it to torch's ``LRScheduler`` plus per-trainer hooks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple, Type, Union

from ..config.setting import Setting
from ..utils.errors import ConfigError, closest

#: the counters a schedule can follow
UNITS = ("env_step", "train_iter")
#: schedule type -> (required keys, optional keys); every type also takes ``unit`` and ``scale``
_KEYS: Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...]]] = {
    "constant": (("value",), ()),
    "linear": (("start", "end", "steps"), ()),
    "exp": (("start", "end", "decay"), ()),
    "cosine": (("start", "end", "steps"), ("warmup",)),
    "piecewise": (("points",), ()),
}
TYPES = tuple(sorted(_KEYS))


@dataclass(frozen=True)
class Schedule:
    """A value as a pure function of ``step`` (see the module docstring for each ``type``).
    ``steps`` is the length of ``linear`` / ``cosine`` and the time constant of ``exp``."""

    type: str
    start: float = 0.0
    end: float = 0.0
    steps: float = 1.0
    warmup: int = 0
    points: Tuple[Tuple[float, float], ...] = ()
    unit: str = "train_iter"
    scale: float = 1.0

    def __post_init__(self) -> None:  # what parse_schedule checks of a config, for one built in code
        piecewise = self.type == "piecewise"
        if self.type not in _KEYS or self.unit not in UNITS or not self.steps > 0 or piecewise != bool(self.points):
            raise ConfigError(f"bad {self!r}: type one of {', '.join(TYPES)}, unit one of {', '.join(UNITS)}, "
                              f"steps > 0, points given for (only) a piecewise schedule")

    @classmethod
    def constant(cls, value: float, unit: str = "train_iter") -> "Schedule":
        return cls("constant", start=float(value), end=float(value), unit=unit)

    def __call__(self, step: float) -> float:
        return self.scale * self._raw(step)

    def _raw(self, step: float) -> float:
        start, end, n = self.start, self.end, self.steps
        if self.type == "constant":
            return start
        if self.type == "linear":  # epsilon's linear form, unchanged (old configs give the same values)
            return max(end, start - (start - end) * step / n) if start >= end else min(end, start + (end - start) * step / n)
        if self.type == "exp":
            return (start - end) * math.exp(-step / n) + end
        if self.type == "cosine":
            if step < self.warmup:
                return start * step / self.warmup
            t = min((step - self.warmup) / n, 1.0)
            return end + (start - end) * 0.5 * (1.0 + math.cos(math.pi * t))
        return _interpolate(self.points, step)

    def named_values(self) -> List[Tuple[str, float]]:
        """The values the schedule passes through, by config key (before ``scale``): every value it
        takes lies between their least and their greatest."""
        if self.type == "constant":
            return [("value", self.start)]
        if self.type == "piecewise":
            return [("points", v) for _, v in self.points]
        return [("start", self.start), ("end", self.end)] + ([("warmup (rising from 0)", 0.0)] if self.warmup > 0 else [])


def _interpolate(points: Sequence[Tuple[float, float]], step: float) -> float:
    if step <= points[0][0]:
        return points[0][1]
    for (s0, v0), (s1, v1) in zip(points, points[1:]):
        if step <= s1:
            return v0 + (v1 - v0) * (step - s0) / (s1 - s0)
    return points[-1][1]


def _number(key: str, name: str, value: object, low: Optional[float] = None, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or (integer and not float(value).is_integer()) or (low is not None and value < low):
        what = ("an integer" if integer else "a finite number") + ("" if low is None else f" >= {low:g}")
        raise ConfigError(f"config key '{key}': schedule key '{name}' must be {what}, got {value!r}")
    return float(value)


def _points(key: str, value: object) -> Tuple[Tuple[float, float], ...]:
    if not isinstance(value, (list, tuple)) or not value or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        raise ConfigError(f"config key '{key}': schedule key 'points' must be a non-empty list of [step, value] "
                          f"pairs, got {value!r}")
    points = tuple((_number(key, "points", s, low=0.0), _number(key, "points", v)) for s, v in value)
    if any(b[0] <= a[0] for a, b in zip(points, points[1:])):
        raise ConfigError(f"config key '{key}': the steps of 'points' must increase, got {[p[0] for p in points]}")
    return points


def parse_schedule(key: str, spec: object, unit: str = "train_iter") -> Schedule:
    """The :class:`Schedule` a config value describes: a number (constant) or a schedule dict.
    ``key`` names the config key in errors; ``unit`` is the key's default counter. Wrong types,
    missing or unknown keys give one line naming the key, the value and what is valid."""
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        return Schedule.constant(_number(key, "value", spec), unit)
    kind, given = _checked_keys(key, spec)
    named = given.get("unit", unit)
    if not isinstance(named, str) or named not in UNITS:
        raise ConfigError(f"config key '{key}': unknown schedule unit {named!r}; valid choices: {', '.join(UNITS)}")
    unit, scale = named, _number(key, "scale", given.get("scale", 1.0))
    if kind == "constant":
        return Schedule("constant", start=_number(key, "value", given["value"]), unit=unit, scale=scale)
    if kind == "piecewise":
        return Schedule("piecewise", points=_points(key, given["points"]), unit=unit, scale=scale)
    length = "decay" if kind == "exp" else "steps"
    steps = _number(key, length, given[length])
    if steps <= 0:
        raise ConfigError(f"config key '{key}': schedule key '{length}' must be > 0, got {given[length]!r}")
    warmup = int(_number(key, "warmup", given.get("warmup", 0), low=0.0, integer=True))
    return Schedule(kind, start=_number(key, "start", given["start"]), end=_number(key, "end", given["end"]),
                    steps=steps, warmup=warmup, unit=unit, scale=scale)


def _checked_keys(key: str, spec: object) -> Tuple[str, Dict[str, object]]:
    """A schedule dict's type and keys, checked: a known type, no unknown key, every required one."""
    if not isinstance(spec, Mapping):
        raise ConfigError(f"config key '{key}' must be a number or a schedule dict (type: {', '.join(TYPES)}), "
                          f"got {spec!r}")
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in _KEYS:
        hint = closest(kind, TYPES) if isinstance(kind, str) else None
        raise ConfigError(f"config key '{key}': unknown schedule type {kind!r}"
                          + (f" (did you mean {hint!r}?)" if hint else "") + f"; valid choices: {', '.join(TYPES)}")
    required, optional = _KEYS[kind]
    given = {str(k): v for k, v in spec.items()}
    if kind == "linear" and "decay" in given and "steps" not in given:  # epsilon's older spelling
        given["steps"] = given.pop("decay")
    valid = ("type", *required, *optional, "unit", "scale")
    for name in given:
        if name not in valid:
            hint = closest(name, valid)
            raise ConfigError(f"config key '{key}': a '{kind}' schedule has no key {name!r}"
                              + (f" (did you mean {hint!r}?)" if hint else "") + f"; valid keys: {', '.join(valid)}")
    missing = [name for name in required if name not in given]
    if missing:
        raise ConfigError(f"config key '{key}': a '{kind}' schedule needs {', '.join(repr(m) for m in missing)}; "
                          f"valid keys: {', '.join(valid)}")
    return kind, given


def get_epsilon_greedy_fn(start: float, end: float, decay: int, type_: str = "exp") -> Schedule:
    """Epsilon as a function of env steps: ``'exp'`` = (start-end)*e^(-step/decay)+end; ``'linear'``
    goes from start to end over ``decay`` steps then stays. (The schedule ``{type_, start, end, decay}``.)"""
    return parse_schedule("eps", dict(type=type_, start=start, end=end, decay=decay), "env_step")


class Scheduled(Setting):
    """A :class:`~stride.config.setting.Setting` whose value may also be a schedule dict. A number
    is checked as a ``Setting``'s; a schedule must parse, and the interval bounds every value it
    takes, closed at its ends (a learning rate may decay to 0). A dict given over a dict default of
    the same type (or without ``type``) keeps the default's other keys (``eps=dict(decay=5000)``).
    ``unit``: the counter a schedule of this key follows unless it names one."""

    __slots__ = ("unit",)
    takes_dict = True

    def __init__(self, default: object, valid: Union[str, Sequence[object], None] = None, *, unit: str = "train_iter",
                 optional: bool = False, kind: Optional[Type[Union[int, float]]] = None) -> None:
        if unit not in UNITS:
            raise ValueError(f"unknown schedule unit {unit!r}; valid choices: {', '.join(UNITS)}")
        self.unit = unit
        super().__init__(default, valid, optional=optional, kind=kind)

    def describe(self) -> str:
        return super().describe() + f" or a schedule dict (type: {', '.join(TYPES)})"

    def resolve(self, dotted: str, value: object) -> object:
        if isinstance(value, Mapping) and isinstance(self.default, Mapping) \
                and value.get("type", self.default.get("type")) == self.default.get("type"):
            value = {**self.default, **value}
        return super().resolve(dotted, value)

    def check(self, dotted: str, value: object) -> None:
        if not isinstance(value, Mapping):
            super().check(dotted, value)
            return
        schedule = parse_schedule(dotted, value, self.unit)
        if self.interval is None:
            return
        lo, hi, _, _ = self.interval
        for name, raw in schedule.named_values():
            if not lo <= schedule.scale * raw <= hi:  # closed: a schedule may end on a bound (lr -> 0)
                scaled = "" if schedule.scale == 1.0 else f" (times scale {schedule.scale:g})"
                raise ConfigError(f"config key '{dotted}.{name}' must be a schedule value{scaled} in "
                                  f"[{lo:g}, {hi:g}], got {raw!r}")

    def schedule(self, dotted: str, value: object) -> Schedule:
        """The schedule of a (merged, checked) config value of this key."""
        return parse_schedule(dotted, value, self.unit)


class HasParamGroups(Protocol):
    """An optimizer as :meth:`Schedules.set_lr` sees it (``torch.optim.Optimizer`` is one)."""

    param_groups: List[Dict[str, Any]]


class Schedules:
    """A policy's scheduled hyper-parameters (dotted key -> :class:`Schedule`) and the counters they
    follow. ``value(key)`` reads the current one (``set_lr`` writes a rate into an optimizer); the policy advances ``train_iter`` after each learn
    step and is told ``env_step`` by the learner; collect mode passes the collector's counters."""

    def __init__(self, schedules: Optional[Mapping[str, Schedule]] = None) -> None:
        self._schedules: Dict[str, Schedule] = dict(schedules or {})
        self.counters: Dict[str, int] = {unit: 0 for unit in UNITS}

    @classmethod
    def from_config(cls, declared: Mapping[str, object], cfg: Mapping[str, object]) -> "Schedules":
        """The schedule of every :class:`Scheduled` key of a declaration, from the value in ``cfg``
        (the declared default where ``cfg`` lacks the key)."""
        out = cls()
        for dotted, setting in _scheduled(declared).items():
            node: object = cfg
            for part in dotted.split("."):
                node = node.get(part, setting.default) if isinstance(node, Mapping) else setting.default
            if node is not None:
                out.set(dotted, setting.schedule(dotted, node))
        return out

    def set(self, key: str, schedule: Schedule) -> None:
        self._schedules[key] = schedule

    def get(self, key: str) -> Schedule:
        try:
            return self._schedules[key]
        except KeyError:
            raise KeyError(f"'{key}' is not a scheduled key; scheduled: {', '.join(sorted(self._schedules))}") from None

    def value(self, key: str, env_step: Optional[int] = None, train_iter: Optional[int] = None) -> float:
        """The value of ``key`` at the given counters (default: the current ones)."""
        schedule = self.get(key)
        given = env_step if schedule.unit == "env_step" else train_iter
        return schedule(self.counters[schedule.unit] if given is None else given)

    def set_lr(self, optimizer: HasParamGroups, key: str = "learn.learning_rate") -> float:
        """Write the current value of ``key`` into every parameter group of ``optimizer`` (a
        ``torch.optim.Optimizer``); returns it: the one way an algorithm applies a scheduled rate."""
        lr = self.value(key)
        for group in optimizer.param_groups:
            group["lr"] = lr
        return lr

    def keys(self) -> List[str]:
        return sorted(self._schedules)

    def state_dict(self) -> Dict[str, int]:
        return dict(self.counters)

    def load_state_dict(self, state: Mapping[str, int]) -> None:
        for unit in UNITS:
            self.counters[unit] = int(state.get(unit, 0))


def _scheduled(tree: Mapping[str, object], prefix: str = "") -> Dict[str, Scheduled]:
    found: Dict[str, Scheduled] = {}
    for k, v in tree.items():
        if isinstance(v, Scheduled):
            found[f"{prefix}{k}"] = v
        elif isinstance(v, Mapping):
            found.update(_scheduled(v, f"{prefix}{k}."))
    return found
