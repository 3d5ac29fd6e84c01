"""Nested-dict configs with attribute access, strict merging, and saving.

``Config`` is a plain ``dict`` subclass with attribute access (as the seeds' EasyDict), but a
mistyped attribute raises an error naming the closest key instead of silently creating one.
``merge_config`` merges a user's dict over defaults and refuses unknown keys with the full dotted
key and the closest valid one -- DI-engine accepts any key, so a typo silently disables a setting.
"""

from __future__ import annotations

import copy
import json
import math
import os
import pprint
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Tuple, Type, TypeVar

from ..utils.errors import ConfigError, closest
from ..utils.files import atomic_write_text
from .setting import REQUIRED, Setting, check_like, plain
from .setting import deep_update as deep_update, is_free_form as is_free_form  # (their home before the views)
from .view import ConfigView

#: a :class:`~stride.config.view.ConfigView` subclass
V = TypeVar("V", bound=ConfigView)


class Config(Dict[str, Any]):
    """A dict whose keys read and write as attributes; nested dicts become Configs."""

    def __init__(self, data: Optional[Mapping[str, object]] = None, /, **kwargs: object) -> None:
        super().__init__(data or {}, **kwargs)
        for k, v in self.items():
            if isinstance(v, Mapping) and not isinstance(v, Config):
                dict.__setitem__(self, k, Config(v))

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            if key.startswith("__"):
                raise AttributeError(key) from None
            hint = closest(key, self.keys())
            raise AttributeError(
                f"config has no key '{key}'" + (f" (did you mean '{hint}'?)" if hint else "")
            ) from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value

    def __setitem__(self, key: str, value: Any) -> None:
        if isinstance(value, Mapping) and not isinstance(value, Config):
            value = Config(value)
        super().__setitem__(key, value)

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Config":
        return Config(copy.deepcopy(dict(self), memo))

    def to_dict(self) -> Dict[str, object]:
        """A plain nested dict (for JSON, checkpoints and printing)."""
        return {k: v.to_dict() if isinstance(v, Config) else v for k, v in self.items()}


class Configurable:
    """A component that declares its config once: as the fields of its :attr:`config_view` (a
    typed :class:`~stride.config.view.ConfigView`), or in :meth:`declared_config` (plain defaults or
    :class:`~stride.config.setting.Setting` leaves); :meth:`default_config` gives the plain values."""

    #: the typed view of this component's config; its fields are the declaration
    config_view: ClassVar[Optional[Type[ConfigView]]] = None

    @classmethod
    def declared_config(cls) -> Dict[str, object]:
        """The config declaration: defaults with their valid values (see ``stride.config.setting``)."""
        return cls.config_view.declaration() if cls.config_view is not None else {}

    def typed_config(self, kind: Type[V], cfg: Optional[Mapping[str, object]], prefix: str = "") -> V:
        """``cfg`` merged over :meth:`declared_config` (checked: unknown keys, types, ranges) and read
        as this class's :attr:`config_view`, which must be a ``kind``: what a constructor reads."""
        view = type(self).config_view or kind
        if not issubclass(view, kind):
            raise TypeError(f"{type(self).__name__}.config_view is {view.__name__}, not a {kind.__name__}")
        return view.from_config(merge_config(self.declared_config(), cfg or {}, prefix), prefix)

    @classmethod
    def default_config(cls) -> "Config":
        """The default values, as a :class:`Config` of plain values."""
        return Config(plain(cls.declared_config()))


def declaration(component: object) -> Dict[str, object]:
    """A component class's config declaration: ``declared_config()`` where it has one, else its
    ``default_config()`` (a user's component written the DI-engine way: plain defaults)."""
    declare = getattr(component, "declared_config", None) or getattr(component, "default_config")
    declared = declare()
    if not isinstance(declared, Mapping):
        raise TypeError(f"{component!r} declares its config as a {type(declared).__name__}, not a dict")
    return dict(declared)


def section(tree: Mapping[str, object], key: str) -> Mapping[str, object]:
    """``tree[key]``, a nested dict of settings: empty where the key is missing or None, a
    ``ConfigError`` where it holds anything else. The narrowing of a config tree's sub-trees."""
    node = tree.get(key)
    if node is None:
        return {}
    if not isinstance(node, Mapping):
        raise ConfigError(f"config key '{key}' must be a dict of settings, got {node!r}")
    return node


def type_name(tree: Mapping[str, object], key: str) -> Optional[str]:
    """``tree[key]['type']``, the registered name of a component (None where not given); a
    ``ConfigError`` where it is not a string."""
    name = section(tree, key).get("type")
    if name is not None and not isinstance(name, str):
        raise ConfigError(f"config key '{key}.type' must be a registered name (a string), got {name!r}")
    return name


def merge_config(default: Mapping[str, object], user: Mapping[str, object], prefix: str = "") -> Config:
    """``default`` updated by ``user`` (user wins); unknown keys, wrong types and values outside a
    :class:`~stride.config.setting.Setting`'s range are refused with one line. ``default`` may be
    a declaration (leaves that are ``Setting``s); the result holds plain values only."""
    out = Config(plain(default))
    for key, value in user.items():
        dotted = f"{prefix}{key}"
        if key not in default:
            hint = closest(key, default.keys())
            raise ConfigError(
                f"unknown config key '{dotted}'"
                + (f" (did you mean '{prefix}{hint}'?)" if hint else "")
                + f"; valid keys here: {', '.join(sorted(map(str, default.keys()))) or '(none)'}"
            )
        base = default[key]
        if isinstance(base, Setting):
            out[key] = base.resolve(dotted, value)
        elif isinstance(base, Mapping) and not is_free_form(base):
            if not isinstance(value, Mapping):
                raise ConfigError(f"config key '{dotted}' must be a dict of settings, got {value!r}")
            out[key] = merge_config(base, value, dotted + ".")
        else:
            check_like(dotted, base, value)
            out[key] = copy.deepcopy(value)
    return out


def missing_required(cfg: Mapping[str, object], prefix: str = "") -> List[str]:
    """Dotted keys still holding ``REQUIRED``."""
    found = []
    for k, v in cfg.items():
        if isinstance(v, Mapping):
            found += missing_required(v, f"{prefix}{k}.")
        elif isinstance(v, str) and v == REQUIRED:
            found.append(f"{prefix}{k}")
    return found


def get_dotted(cfg: Mapping[str, object], dotted: str, default: object = None) -> object:
    """The value at a dotted key (``'policy.learn.batch_size'``), or ``default`` where there is none."""
    node: object = cfg
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return node


# ---- saving -------------------------------------------------------------------------------------
def _py_literal(obj: Any, indent: int = 0) -> str:
    """Python source for a nested dict of plain values (``inf`` written as ``float('inf')``)."""
    pad = "    " * (indent + 1)
    if isinstance(obj, Mapping):
        if not obj:
            return "dict()"
        items = []
        for k, v in obj.items():
            key = k if isinstance(k, str) and k.isidentifier() else None
            val = _py_literal(v, indent + 1)
            items.append(f"{pad}{key}={val}," if key else f"{pad}**{{{k!r}: {val}}},")
        return "dict(\n" + "\n".join(items) + "\n" + "    " * indent + ")"
    if isinstance(obj, float) and math.isinf(obj):
        return "float('inf')" if obj > 0 else "float('-inf')"
    if isinstance(obj, (list, tuple)):
        inner = ", ".join(_py_literal(v, indent + 1) for v in obj)
        return f"[{inner}]" if isinstance(obj, list) else f"({inner}{',' if len(obj) == 1 else ''})"
    return repr(obj)


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, float) and math.isinf(obj):
        return "inf" if obj > 0 else "-inf"
    return obj


def _json_restore(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _json_restore(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_json_restore(v) for v in obj]
    if obj == "inf":
        return float("inf")
    if obj == "-inf":
        return float("-inf")
    return obj


def _subdict(tree: Dict[str, object], key: str) -> Dict[str, object]:
    """``tree[key]`` of a plain config (``to_dict()``), for editing in place: empty where missing."""
    node = tree.get(key)
    if node is None:
        return {}
    if not isinstance(node, dict):
        raise ConfigError(f"config key '{key}' must be a dict of settings, got {node!r}")
    return node


def split_create_config(cfg: Mapping[str, object]) -> Tuple[Dict[str, object], Dict[str, object]]:
    """Split a compiled config into ``(main_config, create_config)`` (types go to create_config)."""
    main = copy.deepcopy(Config(cfg).to_dict())
    create: Dict[str, object] = {}
    env = _subdict(main, "env")
    create["env"] = {"type": env.pop("type", "gymnasium")}
    create["env_manager"] = {"type": _subdict(env, "manager").pop("type", "base")}
    pol = _subdict(main, "policy")
    create["policy"] = {"type": pol.pop("type", None)}
    rb = _subdict(pol, "other").get("replay_buffer")
    if isinstance(rb, dict) and "type" in rb:
        create["replay_buffer"] = {"type": rb.pop("type")}
    col = _subdict(pol, "collect").get("collector")
    if isinstance(col, dict) and "type" in col:
        create["collector"] = {"type": col.pop("type")}
    return main, create


def config_source(main: Mapping[str, object], create: Mapping[str, object], header: str = "") -> str:
    """A runnable config file's text (``stride -m serial -c FILE``): ``header`` (comments or a
    docstring), then ``main_config`` and ``create_config`` as Python literals."""
    return f"{header}main_config = {_py_literal(main)}\n\ncreate_config = {_py_literal(create)}\n"


def save_config(cfg: Mapping[str, object], exp_dir: str) -> None:
    """Write ``total_config.py``, ``formatted_total_config.py`` and ``total_config.json``."""
    plain = Config(cfg).to_dict()
    atomic_write_text(
        os.path.join(exp_dir, "total_config.py"),
        "# The whole compiled config of this experiment (defaults merged with the user's).\n"
        f"exp_config = {_py_literal(plain)}\n",
    )
    main, create = split_create_config(plain)
    atomic_write_text(
        os.path.join(exp_dir, "formatted_total_config.py"),
        config_source(main, create, "# Runnable: `stride -m serial -c formatted_total_config.py -s SEED` "
                                    "reproduces this experiment.\n"),
    )
    atomic_write_text(os.path.join(exp_dir, "total_config.json"), json.dumps(_json_safe(plain), indent=2) + "\n")


def load_json_config(path: str) -> Config:
    """Read a ``total_config.json`` back (data only: nothing is executed); a file that is not a
    JSON object (truncated, hand-edited into invalid JSON) is one ``ConfigError`` line."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        where = f" at line {e.lineno} column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
        raise ConfigError(f"'{path}' is not valid JSON{where} (truncated or hand-edited?): "
                          f"{e.msg if isinstance(e, json.JSONDecodeError) else e.reason}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"'{path}' does not hold a config (a JSON object), but a {type(data).__name__}")
    return Config(_json_restore(data))


def format_config(cfg: Mapping[str, object]) -> str:
    return pprint.pformat(Config(cfg).to_dict(), sort_dicts=False)
