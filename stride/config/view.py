"""Typed config views: a component's config declared once, as a frozen dataclass.

A component writes its settings as the fields of a :class:`ConfigView`; a field's default is the
setting's default, and ``setting(default, valid)`` puts its valid values on the same line::

    @dataclass(frozen=True)
    class EvaluatorConfig(ConfigView):
        # (int) evaluate every this many train iterations.
        eval_freq: int = setting(1000, "[1, inf)")
        # (str) what an episode scores.
        metric: str = setting("return", ("return", "success"))

The same class is both halves of the contract: :meth:`ConfigView.declaration` is the nested dict of
defaults and :class:`~stride.config.setting.Setting`\\ s that ``compile_config`` merges a user's
config over (``Configurable.declared_config`` returns it), and :meth:`ConfigView.from_config` is the
typed, read-only value the component's constructor reads (``self._cfg.eval_freq`` is an ``int`` to
mypy, not ``Any``). A default therefore exists once: there is no ``cfg.get("eval_freq", 1000)`` to
drift from it. DI-engine and SB3 read untyped dicts or keyword arguments whose defaults are written
again at every reader; Hydra's structured configs type the values but check no ranges.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Dict, Mapping, Optional, Sequence, Type, TypeVar, Union

from ..utils.errors import ConfigError
from .setting import Setting, deep_update

#: a :class:`ConfigView` subclass
V = TypeVar("V", bound="ConfigView")

#: field metadata keys: the ``Setting`` of a leaf, the view class of a nested section, a fixed value
_SETTING = "stride_setting"
_SECTION = "stride_section"
_FIXED = "stride_fixed"


def setting(default: object, valid: Union[str, Sequence[object], None] = None, *, optional: bool = False,
            kind: Optional[Type[Union[int, float]]] = None) -> Any:
    """A :class:`ConfigView` field whose default comes with its valid values (a ``Setting``: an
    interval string or a tuple of choices; or ``default`` is a ``Setting`` itself, such as a
    ``Scheduled``, whose value may be a schedule dict). Typed ``Any`` as ``dataclasses.field`` is,
    so the field's annotation is its type."""
    declared = default if isinstance(default, Setting) else Setting(default, valid, optional=optional, kind=kind)
    return _field(declared.default, {_SETTING: declared})


def declared(value: object) -> Any:
    """A :class:`ConfigView` field declared by a plain value, not a ``Setting``: ``REQUIRED`` (the
    user gives it; typed as the annotation says), or a dict of defaults merged key by key (another
    component's keys this one presets, such as a policy's ``other.replay_buffer``; ``{}``: any keys)."""
    return _field(value, {})


def fixed(value: object) -> Any:
    """A :class:`ConfigView` field that is no setting: the value a component's code reads for a key
    it does not declare (not in :meth:`ConfigView.declaration`, not read from a config). A subclass
    that declares the key (a :func:`setting` field of the same name) makes it a setting."""
    return _field(value, {_FIXED: True})


def _field(default: object, metadata: Dict[str, object]) -> Any:
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: copy.deepcopy(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def subsection(view: Type["ConfigView"]) -> Any:
    """A :class:`ConfigView` field holding a nested section, itself a view (its defaults by default)."""
    return dataclasses.field(default_factory=view, metadata={_SECTION: view})


def sections_of(view: Type["ConfigView"]) -> Dict[str, Type["ConfigView"]]:
    """The nested sections of a view class: each :func:`subsection` field's name and view."""
    return {f.name: f.metadata[_SECTION] for f in dataclasses.fields(view) if _SECTION in f.metadata}


def _is_int_field(f: "dataclasses.Field[object]") -> bool:
    """Whether a field's setting is an integer (a ``Setting`` of kind int, or a plain int default)."""
    declared = f.metadata.get(_SETTING)
    if declared is not None:
        return declared.kind is int and not declared.elementwise
    return isinstance(f.default, int) and not isinstance(f.default, bool)


def _own_declaration(view: type) -> Dict[str, object]:
    """The declaration of the fields the view class ``view`` itself writes (not its parents')."""
    own = {f.name: f for f in dataclasses.fields(view)}
    out: Dict[str, object] = {}
    for name in view.__dict__.get("__annotations__", {}):
        f = own.get(name)
        if f is None or _FIXED in f.metadata:
            continue
        if _SECTION in f.metadata:
            out[name] = f.metadata[_SECTION].declaration()
        elif _SETTING in f.metadata:
            out[name] = copy.deepcopy(f.metadata[_SETTING])
        elif f.default is not dataclasses.MISSING:
            out[name] = copy.deepcopy(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            out[name] = f.default_factory()
        else:
            raise TypeError(f"config view {view.__name__} field '{name}' has no default; every setting needs one")
    return out


@dataclasses.dataclass(frozen=True)
class ConfigView:
    """The typed, read-only config of one component; subclasses are frozen dataclasses whose fields
    are its settings (plain defaults, :func:`setting` or :func:`subsection` fields)."""

    @classmethod
    def declaration(cls) -> Dict[str, object]:
        """The declaration ``merge_config`` takes: each field's ``Setting`` (or plain default), and
        a nested section's declaration for a :func:`subsection` field; :func:`fixed` fields are
        left out. A subclass's fields update its parents' as ``deep_update`` does: a plain default
        over a parent's ``Setting`` keeps its valid values, a dict of defaults updates the parent's
        key by key, and a key first declared by the subclass comes after its parents' keys."""
        out: Dict[str, object] = {}
        for klass in reversed(cls.__mro__):
            if issubclass(klass, ConfigView) and dataclasses.is_dataclass(klass):
                out = deep_update(out, _own_declaration(klass))
        return out

    @classmethod
    def from_config(cls: Type[V], merged: Mapping[str, object], prefix: str = "") -> V:
        """The view of a config already merged over :meth:`declaration` (keys beyond the view's
        fields, such as a subclass's or ``type``, are the caller's)."""
        values: Dict[str, object] = {}
        for f in dataclasses.fields(cls):
            if _FIXED in f.metadata:
                continue  # (its default: not a setting of this component)
            if f.name not in merged:
                raise ConfigError(f"config key '{prefix}{f.name}' is missing (a config not merged over its defaults?)")
            value = merged[f.name]
            if _SECTION in f.metadata:
                if not isinstance(value, Mapping):
                    raise ConfigError(f"config key '{prefix}{f.name}' must be a dict of settings, got {value!r}")
                value = f.metadata[_SECTION].from_config(value, f"{prefix}{f.name}.")
            elif _is_int_field(f) and isinstance(value, float) and value.is_integer():
                value = int(value)  # an int key takes integral floats (``1e5``); its view reads an int
            values[f.name] = value
        return cls(**values)
