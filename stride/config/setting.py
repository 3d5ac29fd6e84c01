"""``Setting``: a config default declared together with the values it accepts.

Components declare their config as nested dicts whose leaves are plain defaults or ``Setting``s::

    learn=dict(
        # (float) Adam step size.
        learning_rate=Setting(1e-3, "(0, inf)"),
        # (str) TD loss.
        loss_type=Setting("mse", ("mse", "huber")),
        # (float|None) clip the gradient norm to this value (None: no clipping).
        grad_clip_norm=Setting(None, "(0, inf)"),
    )

The range sits on the line of the default it belongs to, so a new key gets its check where it is
written, not in an if-chain elsewhere. ``merge_config`` checks every value a user gives against
its ``Setting`` (type, then range or choices) and fails with one line that names the key, the
value and what is valid; ``default_config()`` of every component returns the plain values (what
DI-engine's users read). DI-engine validates nothing (``lr=-1`` trains; ``batch_size=0`` crashes
deep in collate), SB3 checks a few keys inside each algorithm's constructor; here every numeric
key with a meaningful range has one, checked before anything is built or written.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple, Type, Union, overload

from ..utils.errors import ConfigError, closest

#: A default value meaning "the user must give this key".
REQUIRED = "<required>"

Interval = Tuple[float, float, bool, bool]  # low, high, low closed, high closed


def parse_interval(text: str) -> Interval:
    """``"(0, 1]"`` -> ``(0.0, 1.0, False, True)``; bounds may be ``inf`` / ``-inf``."""
    s = text.strip()
    if len(s) < 5 or s[0] not in "[(" or s[-1] not in "])" or s.count(",") != 1:
        raise ValueError(f"bad interval {text!r}; write it like '(0, 1]' or '[1, inf)'")
    lo, hi = (float(part) for part in s[1:-1].split(","))
    if lo > hi:
        raise ValueError(f"bad interval {text!r}: low > high")
    return lo, hi, s[0] == "[", s[-1] == "]"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_like(dotted: str, default: object, value: object) -> None:
    """A value for a key declared by a plain ``default`` must have the default's type (an int key
    takes integral floats like ``1e5`` and ``inf``; None and REQUIRED defaults take anything)."""
    if default is None or default == REQUIRED or value is None:
        return
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, (int, float)):
        ok = _is_number(value)
        if ok and isinstance(default, int) and isinstance(value, float) and not (math.isinf(value) or value.is_integer()):
            ok = False
    elif isinstance(default, str):
        ok = isinstance(value, str)
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, (list, tuple))
    else:
        ok = True
    if not ok:
        raise ConfigError(
            f"config key '{dotted}' expects a value like {default!r} ({type(default).__name__}), got {value!r}"
        )


class Setting:
    """A default plus its valid values: an interval string like ``"[1, inf)"`` for numbers (for a
    list default, every element), or a tuple of choices. ``optional=True`` also accepts None
    (implied when the default is None). ``kind`` (``int`` or ``float``) types a numeric key whose
    default is None or ``REQUIRED``; otherwise the default's type is the key's type."""

    __slots__ = ("default", "interval", "choices", "optional", "kind", "text", "elementwise")
    #: whether a dict value may stand for this key (a schedule: ``stride.rl_utils.schedule.Scheduled``)
    takes_dict = False

    def __init__(self, default: object, valid: Union[str, Sequence[object], None] = None, *, optional: bool = False,
                 kind: Optional[Type[Union[int, float]]] = None) -> None:
        self.default = default
        self.interval: Optional[Interval] = None
        self.choices: Optional[Tuple[object, ...]] = None
        self.text = ""
        if isinstance(valid, str):
            self.interval = parse_interval(valid)
            self.text = valid.strip()
        elif valid is not None:
            self.choices = tuple(valid)
        self.optional = bool(optional or default is None)
        self.elementwise = isinstance(default, (list, tuple)) and self.interval is not None
        sample = default[0] if isinstance(default, (list, tuple)) and self.elementwise and default else default
        if kind is None and _is_number(sample):
            kind = int if isinstance(sample, int) else float
        if kind is None and self.interval is not None:
            kind = float
        self.kind = kind
        if default is not None and default != REQUIRED:
            self.check("<default>", default)  # a declaration that contradicts itself fails at import

    def with_default(self, default: object) -> "Setting":
        """The same constraints around another default (a subclass's or a zoo's)."""
        out = copy.copy(self)
        out.default = default
        if default is not None and default != REQUIRED:
            out.check("<default>", default)
        return out

    def describe(self) -> str:
        """What is valid, for messages and docs."""
        if self.choices is not None:
            text = "one of: " + ", ".join(sorted(str(c) for c in self.choices))
        elif self.kind is not None:
            text = "an integer" if self.kind is int else "a number"
            if self.interval is not None:
                text += f" in {self.text}"
            if self.elementwise:
                text = "a non-empty list of " + text.replace("an integer", "integers").replace("a number", "numbers")
        else:
            text = f"a value like {self.default!r}"
        return text + (" (or None)" if self.optional else "")

    def resolve(self, dotted: str, value: object) -> object:
        """The value a user's ``value`` for the key ``dotted`` stands for, checked (``merge_config``)."""
        self.check(dotted, value)
        return copy.deepcopy(value)

    def check(self, dotted: str, value: object) -> None:
        """Raise a one-line ``ConfigError`` unless ``value`` is valid for the key ``dotted``."""
        if value is None:
            if not self.optional:
                raise ConfigError(f"config key '{dotted}' must be {self.describe()}, got None")
            return
        if self.choices is not None:
            if value not in self.choices or isinstance(value, bool) != any(isinstance(c, bool) for c in self.choices):
                hint = closest(str(value), [str(c) for c in self.choices]) if isinstance(value, str) else None
                raise ConfigError(f"unknown value {value!r} for config key '{dotted}'"
                                  + (f" (did you mean {hint!r}?)" if hint else "")
                                  + f"; valid choices: {', '.join(sorted(str(c) for c in self.choices))}")
            return
        if self.elementwise:
            if not isinstance(value, (list, tuple)) or not value or not all(self._valid_number(v) for v in value):
                raise ConfigError(f"config key '{dotted}' must be {self.describe()}, got {value!r}")
            return
        if self.kind is None:
            check_like(dotted, self.default, value)
            return
        if not self._valid_number(value):
            raise ConfigError(f"config key '{dotted}' must be {self.describe()}, got {value!r}")

    def _valid_number(self, value: Any) -> bool:
        if not _is_number(value) or (isinstance(value, float) and math.isnan(value)):
            return False
        if self.kind is int and isinstance(value, float) and not (math.isinf(value) or value.is_integer()):
            return False
        if self.interval is None:
            return True
        lo, hi, lo_closed, hi_closed = self.interval
        return bool((value >= lo if lo_closed else value > lo) and (value <= hi if hi_closed else value < hi))

    def __repr__(self) -> str:
        valid = self.text or (self.choices if self.choices is not None else "")
        return f"Setting({self.default!r}{', ' + repr(valid) if valid else ''})"

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Setting":
        out = copy.copy(self)
        out.default = copy.deepcopy(self.default, memo)
        return out


@overload
def plain(tree: Mapping[str, object]) -> Dict[str, object]: ...


@overload
def plain(tree: object) -> object: ...


def plain(tree: object) -> object:
    """``tree`` with every ``Setting`` replaced by its default (a deep copy)."""
    if isinstance(tree, Setting):
        return copy.deepcopy(tree.default)
    if isinstance(tree, Mapping):
        return {k: plain(v) for k, v in tree.items()}
    return copy.deepcopy(tree)


def settings_of(tree: Mapping[str, object], prefix: str = "") -> Dict[str, Setting]:
    """Every ``Setting`` in a declaration, by dotted key (for docs and tests)."""
    found: Dict[str, Setting] = {}
    for k, v in tree.items():
        if isinstance(v, Setting):
            found[f"{prefix}{k}"] = v
        elif isinstance(v, Mapping):
            found.update(settings_of(v, f"{prefix}{k}."))
    return found


def is_free_form(default: object) -> bool:
    """An empty dict default means 'any keys': its contents are not validated."""
    return isinstance(default, Mapping) and len(default) == 0


def deep_update(dst: Dict[str, object], src: Mapping[str, object], keys: Optional[Iterable[str]] = None) -> Dict[str, object]:
    """Plain recursive update without validation (for building declarations and defaults). A plain
    value written over a :class:`Setting` keeps that setting's constraints around the new default."""
    for k, v in src.items():
        old = dst.get(k)
        if isinstance(v, Mapping) and isinstance(old, Mapping) and not is_free_form(old):
            dst[k] = deep_update(dict(old), v)
        elif isinstance(old, Setting) and not isinstance(v, Setting) and (old.takes_dict or not isinstance(v, Mapping)):
            dst[k] = old.with_default(old.resolve(k, v) if isinstance(v, Mapping) else copy.deepcopy(v))
        else:
            dst[k] = copy.deepcopy(v)
    return dst
