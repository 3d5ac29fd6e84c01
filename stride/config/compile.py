"""``compile_config``: defaults of every component merged with the user's config, validated, saved.

Bottom-up: each component's ``default_config()`` forms the default tree -- the compiler's own
sections (top level, env, policy, the model's signature), then each registry's
(:class:`~stride.utils.registry.Section`: env manager, replay buffer, collector, learner,
evaluator, reward model, league), so no kind of component is named here; the user's ``main_config``
is merged over it (the user wins); unknown keys fail with the full dotted key and the closest
valid one; required keys (``env.stop_value``, ``env.n_evaluator_episode``, ``policy.on_policy``,
exactly one of ``policy.collect.n_sample`` / ``n_episode``) are checked; the result is saved as
``total_config.py``, ``formatted_total_config.py`` and a data-only ``total_config.json``. No env
is built here: what a config takes from the env's spaces (a continuous policy's action range) the
caller hands over (:func:`fill_action_range`).
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import dataclasses
import inspect
import os
import shutil
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Protocol, Tuple, runtime_checkable

import gymnasium as gym
import numpy as np

from ..utils.errors import ConfigError
from ..utils.registry import ALL_REGISTRIES, ENV_REGISTRY, MODEL_REGISTRY, POLICY_REGISTRY, Section
from .config import (
    Config, declaration, deep_update, get_dotted, load_json_config, merge_config, missing_required, save_config, section,
    type_name,
)
from .setting import REQUIRED, Setting
from .view import ConfigView, setting


def _model_defaults(model_cls: Callable[..., object]) -> Dict[str, object]:
    """Keyword arguments of a model class: defaults as given, arguments without one REQUIRED; a
    ``Setting`` where the class declares the argument's valid values in ``VALID`` (beside its
    ``__init__``: ``{name: interval string or tuple of choices}``)."""
    out: Dict[str, object] = {}
    valid = getattr(model_cls, "VALID", {})
    for name, p in inspect.signature(model_cls).parameters.items():
        if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        default = p.default if p.default is not inspect.Parameter.empty else REQUIRED
        default = list(default) if isinstance(default, tuple) else default
        out[name] = Setting(default, valid[name]) if name in valid else default
    return out


@dataclasses.dataclass(frozen=True)
class ExperimentConfig(ConfigView):
    """The top level of a compiled config (beside its ``env`` and ``policy`` sections)."""

    #: (str) the experiment folder.
    exp_name: str = "default_experiment"
    #: (int) seeds every RNG (set by ``compile_config``'s ``seed``).
    seed: int = 0
    #: (int) torch's CPU threads.
    num_threads: int = setting(1, "[1, inf)")


@dataclasses.dataclass(frozen=True)
class EnvPipelineConfig(ConfigView):
    """The keys of ``env`` that configure the pipeline (evaluation, env counts), not the env itself;
    the env class's own declaration is merged beside them."""

    #: (str) the registered env name.
    type: str = "gymnasium"
    #: (float) stop training when the evaluator's mean return reaches this.
    stop_value: float = setting(REQUIRED, kind=float)
    #: (int) episodes per evaluation.
    n_evaluator_episode: int = setting(REQUIRED, "[1, inf)", kind=int)
    #: (int) envs of the collector's / the evaluator's env manager.
    collector_env_num: int = setting(8, "[1, inf)")
    evaluator_env_num: int = setting(5, "[1, inf)")


def _env_defaults(env_cls: object) -> Dict[str, object]:
    base = EnvPipelineConfig.declaration()
    if hasattr(env_cls, "default_config"):
        base = deep_update(base, declaration(env_cls))
    return base


#: keys of ``env`` that configure the pipeline (manager, evaluation, env counts), not the env itself
ENV_KEYS_NOT_FOR_ENV = ("manager", *(f.name for f in dataclasses.fields(EnvPipelineConfig)))


def env_kwargs(env_cfg: Mapping[str, object]) -> Dict[str, object]:
    """The part of a compiled ``env`` section that the env class itself takes as its ``cfg``."""
    plain_cfg = env_cfg.to_dict() if isinstance(env_cfg, Config) else dict(env_cfg)
    return {k: v for k, v in plain_cfg.items() if k not in ENV_KEYS_NOT_FOR_ENV}


@runtime_checkable
class _PolicyClass(Protocol):
    """What :func:`default_main_config` reads of a policy class (``stride.policy.Policy`` is one)."""

    def default_model(self) -> Tuple[str, Mapping[str, object]]: ...


def needs_action_range(cfg: Config) -> bool:
    """Whether the policy takes its ``action_range`` from the env (a continuous policy's, left None)."""
    return "action_range" in cfg.policy and cfg.policy.action_range is None


def fill_action_range(cfg: Config, space: gym.Space[object]) -> None:
    """A continuous policy's ``action_range`` left None is taken from the env's action space
    ``space`` (a bounded float Box), so its actions leave in the env's own units.

    The compiler builds no env: the space comes from whoever has one -- every entry passes its env
    manager's (:func:`stride.entry.utils.check_spaces`, before it builds the policy and saves the
    config), a user ``compile_config(..., action_space=env.action_space)``."""
    if not needs_action_range(cfg):
        return
    if isinstance(space, gym.spaces.Box) and space.dtype.kind == "f" and np.all(np.isfinite(space.low)) \
            and np.all(np.isfinite(space.high)):
        cfg.policy.action_range = [space.low.astype(float).reshape(-1).tolist(), space.high.astype(float).reshape(-1).tolist()]


def default_main_config(create_cfg: Mapping[str, object], user_cfg: Optional[Mapping[str, object]] = None) -> Config:
    """The default config tree for the components named in ``create_cfg`` (and in the user's
    config, whose ``<section>.type`` wins as it wins in the merge). The env, the policy and its
    model are the compiler's own sections; every other kind of component is asked for its section
    by its registry (:class:`stride.utils.registry.Section`), so a new kind needs no line here."""
    user = user_cfg or {}
    env_type = type_name(create_cfg, "env") or "gymnasium"
    policy_type = type_name(create_cfg, "policy")
    if policy_type is None:
        raise ConfigError("create_config.policy.type is required (the registered policy name, e.g. 'dqn')")
    policy_cls = POLICY_REGISTRY.get(policy_type)

    env = _env_defaults(ENV_REGISTRY.get(env_type))
    env["type"] = env_type
    policy = declaration(policy_cls)
    policy["type"] = policy_type
    named_model = type_name(create_cfg, "model")
    model_type = named_model or _default_model_name(policy_type, policy_cls)
    model_defaults = _model_defaults(MODEL_REGISTRY.get(model_type))
    if named_model is not None:  # recorded, so the policy builds this model (and a resumed run finds it)
        model_defaults["type"] = named_model
    policy["model"] = deep_update(model_defaults, section(policy, "model"))
    tree: Dict[str, object] = dict(ExperimentConfig.declaration(), env=env, policy=policy)
    for registry in ALL_REGISTRIES:
        if registry.section is not None:
            _add_section(tree, registry.section, registry.get, create_cfg, user)
    return Config(tree)


def _add_section(tree: Dict[str, object], where: Section, component: Callable[[str], object],
                 create_cfg: Mapping[str, object], user: Mapping[str, object]) -> None:
    """The declaration of the component (registered as ``component(name)``) that a registry's
    section ``where`` names, written at its path (over the defaults already there: a policy's own
    ``other.replay_buffer`` settings)."""

    def lookup(dotted: str) -> object:
        given = get_dotted(user, dotted, _ABSENT)
        return get_dotted(tree, dotted) if given is _ABSENT else given

    *parents, key = where.path.split(".")
    node = tree
    for part in parents:
        node = _own_dict(node, part)
    named = type_name(_at(user, parents), key) or type_name(create_cfg, where.create_key) or type_name(node, key)
    kind = named or where.default_type(lookup)
    if kind is None:
        return
    declared = deep_update(declaration(component(kind)), section(node, key))
    if where.record_type:
        declared["type"] = kind
    node[key] = declared


#: a dotted key the user's config does not give
_ABSENT = object()


def _own_dict(node: Dict[str, object], key: str) -> Dict[str, object]:
    """``node[key]`` as a dict of ``node``'s own (copied in place), created where missing."""
    child = dict(section(node, key))
    node[key] = child
    return child


def _at(tree: Mapping[str, object], parts: List[str]) -> Mapping[str, object]:
    """The sub-tree at ``parts`` (empty where any is missing)."""
    for part in parts:
        tree = section(tree, part)
    return tree


def _default_model_name(policy_type: str, policy_cls: object) -> str:
    """The registered model name a policy class uses when the config names none."""
    if not isinstance(policy_cls, _PolicyClass):
        raise ConfigError(f"policy '{policy_type}' has no default_model(); name one in create_config.model.type")
    return policy_cls.default_model()[0]


def compile_config(
    main_config: Mapping[str, object],
    create_cfg: Optional[Mapping[str, object]] = None,
    save_cfg: bool = True,
    seed: int = 0,
    exp_name: Optional[str] = None,
    renew_dir: bool = True,
    action_space: Optional[gym.Space[object]] = None,
) -> Config:
    """Merge defaults with ``main_config`` (user wins), validate, and save into the experiment folder.

    Args:
        main_config: the user's config (``exp_name``, ``env``, ``policy``).
        create_cfg: component types: ``env.type``, ``env_manager.type``, ``policy.type``, optional
            ``replay_buffer.type``, ``collector.type``, ``model.type``.
        save_cfg: write the three config files into the experiment folder (created here).
        seed: stored as ``cfg.seed``.
        exp_name: overrides ``main_config['exp_name']``.
        renew_dir: when the folder exists, use ``<name>_1``, ``<name>_2``... instead (never overwrite).
        action_space: the env's action space, where a continuous policy's ``policy.action_range``
            is left None (:func:`fill_action_range`). No env is built here: without it that range
            stays None until an entry fills it from its envs, and a policy built on it refuses to
            act (one line naming the fix) rather than act at a wrong scale.
    """
    create_cfg = copy.deepcopy(dict(create_cfg or {}))
    user = copy.deepcopy(dict(main_config))
    if exp_name is not None:
        user["exp_name"] = exp_name
    defaults = default_main_config(create_cfg, user)
    # types named in create_config win over defaults; they are part of the compiled config
    cfg = merge_config(defaults, user)
    cfg.seed = int(seed)
    _check_required(cfg)
    if action_space is not None:
        fill_action_range(cfg, action_space)
    ev = cfg.policy.eval.evaluator
    ev.stop_value = cfg.env.stop_value
    ev.n_episode = cfg.env.n_evaluator_episode
    if save_cfg:
        cfg.exp_name = make_exp_dir(cfg.exp_name, renew=renew_dir)
        save_config(cfg, cfg.exp_name)
    return cfg


def load_saved_config(path: str) -> Config:
    """A run's ``total_config.json``, checked as a user's config is (unknown keys, types, ranges,
    required keys) against the defaults of the components it names: what ``--resume`` and
    ``-m eval`` read. Nothing in it is executed."""
    saved = load_json_config(path)
    if not all(isinstance(saved.get(k), Mapping) for k in ("env", "policy")):
        raise ConfigError(f"'{path}' is not a Stride config (no env and policy sections)")
    # the compiler's own sections' types; every registry's section type (env manager, collector,
    # replay buffer, reward model, league) is read from the saved config by default_main_config
    collector = section(section(saved.policy, "collect"), "collector")
    if isinstance(collector, dict) and "mirror" in collector:  # saved before the board games' mirror became
        if collector.pop("mirror"):                             # their env's sample transform (env.mirror)
            saved.env["mirror"] = True
    try:
        create: Dict[str, object] = {"env": {"type": type_name(saved, "env")},
                                     "policy": {"type": type_name(saved, "policy")},
                                     "model": {"type": type_name(section(saved, "policy"), "model")}}
        cfg = merge_config(default_main_config(create, saved), saved)
        _check_required(cfg)
    except ConfigError as e:
        raise ConfigError(f"'{path}': {e}") from None
    return cfg


def _check_required(cfg: Config) -> None:
    missing = missing_required(cfg)
    if missing:
        raise ConfigError(f"missing required config key(s): {', '.join(missing)}")
    collect = cfg.policy.collect
    given = [k for k in ("n_sample", "n_episode") if collect.get(k) is not None]
    if len(given) != 1:
        raise ConfigError(
            "exactly one of policy.collect.n_sample / policy.collect.n_episode must be given"
            + (f" (both are: {collect.n_sample}, {collect.n_episode})" if len(given) == 2 else " (neither is)")
        )
    if cfg.policy.priority_IS_weight and not cfg.policy.priority:
        raise ConfigError("policy.priority_IS_weight=True needs policy.priority=True")


def make_exp_dir(name: str, renew: bool = True) -> str:
    """Create the experiment folder; an existing one is never reused when ``renew`` (suffix _1, _2...).

    Creation is the test (``os.mkdir`` fails on an existing folder), so two runs started at the same
    moment with the same name get two folders; checking first and creating after would hand both
    the same one. Inside a :func:`provisional_exp_dirs` block the folder this call creates (and the
    folders above it it creates) is removed again if the block fails before :func:`keep_exp_dirs`."""
    parents = _missing_folders(os.path.dirname(os.path.abspath(name)))
    os.makedirs(os.path.dirname(os.path.abspath(name)), exist_ok=True)
    if not renew:
        made = not os.path.isdir(name)
        os.makedirs(name, exist_ok=True)
        if made:
            _made([os.path.abspath(name), *parents])
        return name
    path, k = name, 0
    while True:
        try:
            os.mkdir(path)
            _made([os.path.abspath(path), *parents])
            return path
        except FileExistsError:
            k += 1
            path = f"{name}_{k}"


#: the folders made by :func:`make_exp_dir` in the innermost :func:`provisional_exp_dirs` block and
#: not yet kept: one list per folder, the folder first, then the folders above it that it created
_PENDING: contextvars.ContextVar[Optional[List[List[str]]]] = contextvars.ContextVar("stride_pending_exp_dirs",
                                                                                    default=None)


def _missing_folders(path: str) -> List[str]:
    """``path`` and the folders above it that do not exist yet, innermost first."""
    out: List[str] = []
    while path and not os.path.exists(path):
        out.append(path)
        up = os.path.dirname(path)
        if up == path:
            break
        path = up
    return out


def _made(folders: List[str]) -> None:
    pending = _PENDING.get()
    if pending is not None:
        pending.append(folders)


@contextlib.contextmanager
def provisional_exp_dirs() -> Iterator[None]:
    """A run's build: the experiment folders :func:`make_exp_dir` creates in this block are removed
    again if the block raises (any exception, Ctrl-C included) before :func:`keep_exp_dirs`, so a
    run that could not start (a bad dataset, a missing extra, Ray that did not start) leaves no
    folder and the corrected rerun gets the plain name. Only folders created here are removed --
    never a resumed run's or one that existed before -- and each atomically: renamed to a hidden
    name first, so no half-removed folder is ever seen under the run's name. Usable as a decorator."""
    pending: List[List[str]] = []
    token = _PENDING.set(pending)
    try:
        yield
    except BaseException:
        for folders in reversed(pending):
            _remove(folders)
        raise
    finally:
        _PENDING.reset(token)


def keep_exp_dirs() -> None:
    """The run is built and its loop starts: the folders made so far in the innermost
    :func:`provisional_exp_dirs` block stay, whatever happens next (they hold the run's data)."""
    pending = _PENDING.get()
    if pending is not None:
        pending.clear()


def _remove(folders: List[str]) -> None:
    """Remove a provisional folder (rename, then delete) and the empty folders above it it made."""
    path, parents = folders[0], folders[1:]
    hidden = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.removed{os.getpid()}")
    try:
        os.rename(path, hidden)
    except OSError:
        hidden = path  # (cannot rename: remove it in place)
    shutil.rmtree(hidden, ignore_errors=True)
    for parent in parents:
        try:
            os.rmdir(parent)  # only when empty
        except OSError:
            break
