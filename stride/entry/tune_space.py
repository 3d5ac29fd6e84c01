"""The search space of a tuning study (:mod:`stride.entry.tune`): the one a policy declares next to
its defaults, checked against the config and widened to hold the config's own values (so trial 0 is
always the config itself), and the trials' values written into a config."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Dict, Mapping, Tuple

from ..config.compile import default_main_config
from ..config.config import deep_update, get_dotted, section
from ..config.setting import plain
from ..config.search import Choice, FloatRange, IntRange, SearchParam, SearchSpace, check_search_space
from ..policy.base_policy import Policy
from ..utils.errors import ConfigError
from ..utils.registry import POLICY_REGISTRY, import_components

if TYPE_CHECKING:
    import optuna


def _policy_name(create: Mapping[str, Any]) -> str:
    name = create.get("policy", {}).get("type")
    if not isinstance(name, str):
        raise ConfigError(f"create_config.policy.type must name a policy, got {name!r}")
    return name


def policy_defaults(create: Mapping[str, object], main: Mapping[str, object]) -> Dict[str, object]:
    """The config's ``policy`` section as a run will see it: the policy's defaults, its model's
    (the model class's keyword defaults, so ``model.encoder_hidden_size_list`` is a setting even
    where the config leaves it out) and the user's values over them."""
    import_components()
    tree = plain(default_main_config(create, main)["policy"])
    return deep_update(tree, copy.deepcopy(dict(section(main, "policy"))))


def policy_search_space(create: Mapping[str, object], main: Mapping[str, object]) -> Tuple[str, SearchSpace]:
    """The policy type of a config and its declared search space (checked against its config)."""
    import_components()
    name = _policy_name(create)
    cls = POLICY_REGISTRY.get(name)
    space: SearchSpace = getattr(cls, "search_space", {}) if isinstance(cls, type) and issubclass(cls, Policy) else {}
    if not space:
        tunable = sorted(n for n in POLICY_REGISTRY.names()
                         if getattr(POLICY_REGISTRY.get(n), "search_space", None))
        raise ConfigError(f"policy '{name}' declares no search space; tunable policies: {', '.join(tunable)}")
    check_search_space(space, policy_defaults(create, main), name)
    return name, space


def with_values(main: Mapping[str, object], values: Mapping[str, object]) -> Dict[str, object]:
    """A copy of ``main`` with each ``policy.<dotted key>`` set to its value."""
    out = copy.deepcopy(dict(main))
    for key, value in values.items():
        node = _section(out, "policy", "policy")
        parts = key.split(".")
        for k, part in enumerate(parts[:-1]):
            node = _section(node, part, "policy." + ".".join(parts[:k + 1]))
        node[parts[-1]] = value
    return out


def _section(tree: Dict[str, object], key: str, where: str) -> Dict[str, object]:
    """``tree[key]``, a dict (made empty where missing); a value there that is not one is refused."""
    node = tree.setdefault(key, {})
    if not isinstance(node, dict):
        raise ConfigError(f"{where} is {node!r}, not a section: a searched key cannot go under it")
    return node


def suggest(trial: "optuna.Trial", key: str, param: SearchParam) -> object:
    """The Optuna trial's value of ``key`` in ``param``'s range (a choice's label back to its value)."""
    if isinstance(param, FloatRange):
        return trial.suggest_float(key, param.low, param.high, log=param.log)
    if isinstance(param, IntRange):
        return trial.suggest_int(key, param.low, param.high, log=param.log)
    return param.decode(trial.suggest_categorical(key, list(param.labels)))


def config_values(space: SearchSpace, params: Mapping[str, object]) -> Dict[str, object]:
    """A trial's stored params as config values (a choice's label, e.g. ``'[64, 64]'``, back to its
    value); keys the space lacks are refused."""
    out: Dict[str, object] = {}
    for key, raw in params.items():
        if key not in space:
            raise ConfigError(f"'{key}' is not a key of the study's search space; keys: {', '.join(space)}")
        param = space[key]
        if not isinstance(param, Choice):
            out[key] = raw
        elif raw is None or isinstance(raw, (bool, int, float, str)):
            out[key] = param.decode(raw)
        else:
            raise ConfigError(f"'{key}' holds {raw!r}: a stored choice is a label (None, a number or a string)")
    return out


def _in_space(value: object, param: SearchParam) -> bool:
    if isinstance(param, Choice):
        return value in param
    return isinstance(value, (int, float)) and not isinstance(value, bool) and param.low <= value <= param.high


def around_config(space: SearchSpace, defaults: Mapping[str, object]) -> Dict[str, SearchParam]:
    """The study's space: the declared one widened to hold the config's own value of each key (a
    choice gains it, a range stretches to it), so trial 0 is always the config itself -- a zoo config
    whose net is ``[512, 64]`` or whose ``update_per_collect`` is 10 would otherwise start the study
    from a config nobody wrote. A value of the wrong kind for its range (None, a string) is left out."""
    out: Dict[str, SearchParam] = {}
    for key, param in space.items():
        value = get_dotted(defaults, key)
        if isinstance(param, Choice):
            out[key] = param if value in param else Choice(*param.values, copy.deepcopy(value))
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or (param.log and value <= 0) \
                or (isinstance(param, IntRange) and not isinstance(value, int)) or param.low <= value <= param.high:
            out[key] = param
        elif isinstance(param, IntRange):
            out[key] = IntRange(min(param.low, int(value)), max(param.high, int(value)), param.log)
        else:
            out[key] = FloatRange(min(param.low, float(value)), max(param.high, float(value)), param.log)
    return out


def known_values(defaults: Mapping[str, object], space: SearchSpace) -> Dict[str, object]:
    """The config's own value of each searched key (``defaults``: :func:`policy_defaults`), as the
    study stores it, where it lies in the space: trial 0."""
    out: Dict[str, object] = {}
    for key, param in space.items():
        value = get_dotted(defaults, key)
        if _in_space(value, param):
            out[key] = param.encode(value) if isinstance(param, Choice) else value
    return out
