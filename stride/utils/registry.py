"""Name → class tables, one per ``create_config`` key.

Unlike DI-engine's twenty registries with ``import_names`` strings, Stride has a few tables that
fill when their subpackage is imported; an unknown name fails with the closest valid one.

Each table names the package that holds its built-ins (``Registry('policy', 'stride.policy')``)
and imports it, by name, on the first lookup: a lower layer (``stride.config``) can look up a
policy or a learner without importing the layers above it.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, Generic, Iterator, List, Optional, Type, TypeVar, Union, overload

from .errors import UnknownNameError, unknown_name_message

if TYPE_CHECKING:
    from torch import nn


#: what a registry holds: classes (or factories) called to build a component
T = TypeVar("T", bound=Callable[..., object])
#: a class that what is built is checked against
C = TypeVar("C")


#: the value of a dotted config key: the user's where given, else the default tree's (None: absent)
Lookup = Callable[[str], object]


@dataclass(frozen=True)
class Section:
    """Where the components of one registry sit in a compiled config: the hook through which
    ``compile_config`` asks each kind of component for its section instead of naming the kinds.

    ``default`` is the type used when neither the user's config (``<path>.type``) nor
    ``create_config[create_key].type`` names one: a registered name, None (the section exists only
    when named: a reward model, a league), or a function of the config (a :data:`Lookup`) that
    gives one (an episode collector where ``policy.collect.n_episode`` is given)."""

    #: dotted key of the section (``'policy.collect.collector'``)
    path: str
    #: the ``create_config`` key that names the type (``'collector'``)
    create_key: str
    default: Union[str, None, Callable[[Lookup], Optional[str]]]
    #: the section records its type (``<path>.type``), so a saved config names its components
    record_type: bool = True

    def default_type(self, lookup: Lookup) -> Optional[str]:
        """The type used when none is named."""
        return self.default(lookup) if callable(self.default) else self.default


class Registry(Generic[T]):
    """A named table of classes or factories of type ``T``, filled by the package ``package`` (if
    given). The built-in tables live in this lowest layer, which cannot name the classes of the
    layers above: they hold ``Callable[..., object]`` and their users narrow what they build."""

    def __init__(self, kind: str, package: Optional[str] = None, plugins: Optional[str] = None,
                 section: Optional[Section] = None) -> None:
        self.kind = kind
        self.package = package
        #: where this kind's components sit in a compiled config (None: the compiler's own sections)
        self.section = section
        #: a package whose subpackages register more entries (``'stride.zoo'``: Atari's env type
        #: ``'atari'``); imported, by name, only when a name is not found otherwise
        self.plugins = plugins
        self._table: Dict[str, T] = {}
        self._loaded = package is None
        self._plugins_loaded = plugins is None

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...

    @overload
    def register(self, name: str, obj: T) -> T: ...

    def register(self, name: str, obj: Optional[T] = None) -> Union[T, Callable[[T], T]]:
        """Register ``obj`` under ``name``; usable as ``@REGISTRY.register('name')``."""

        def _do(o: T) -> T:
            if name in self._table and self._table[name] is not o:
                raise ValueError(f"{self.kind} '{name}' is already registered as {self._table[name]!r}")
            self._table[name] = o
            return o

        return _do(obj) if obj is not None else _do

    def load(self) -> None:
        """Import the package that registers the built-ins (once)."""
        if not self._loaded and self.package is not None:
            importlib.import_module(self.package)
            self._loaded = True

    def load_plugins(self) -> None:
        """Import each subpackage of ``plugins`` (once): what they register becomes known (a config
        saved as JSON names ``'atari'`` without importing ``stride.zoo.atari``)."""
        if self._plugins_loaded or self.plugins is None:
            return
        self._plugins_loaded = True
        spec = importlib.util.find_spec(self.plugins)
        paths = spec.submodule_search_locations if spec is not None else None
        for module in pkgutil.iter_modules(paths or []):  # (None would list sys.path)
            if module.ispkg:
                importlib.import_module(f"{self.plugins}.{module.name}")

    def get(self, name: str) -> T:
        """The object registered under ``name``; a clear error naming the valid choices otherwise."""
        try:
            return self._table[name]
        except (KeyError, TypeError):
            pass
        self.load()
        if isinstance(name, str) and name not in self._table:
            self.load_plugins()
        try:
            return self._table[name]
        except (KeyError, TypeError):
            raise UnknownNameError(unknown_name_message(self.kind, name, self._table)) from None

    def build(self, name: str, *args: object, **kwargs: object) -> object:
        """Instantiate the class registered under ``name`` (what it builds is the caller's to narrow)."""
        return self.get(name)(*args, **kwargs)

    def build_as(self, kind: Type[C], name: str, *args: object, **kwargs: object) -> C:
        """:meth:`build`, checked to give a ``kind`` (a ``TypeError`` naming the entry otherwise)."""
        obj = self.build(name, *args, **kwargs)
        if not isinstance(obj, kind):
            raise TypeError(f"{self.kind} '{name}' built a {type(obj).__name__}, not a {kind.__name__}")
        return obj

    def names(self) -> List[str]:
        """The registered names, sorted (built-ins included)."""
        self.load()
        return sorted(self._table)

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._table

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {sorted(self._table)})"


def _collector_type(lookup: Lookup) -> str:
    """Episodes are collected where the policy counts its collects in episodes."""
    return "episode" if lookup("policy.collect.n_episode") is not None and lookup("policy.collect.n_sample") is None \
        else "sample"


def _buffer_type(lookup: Lookup) -> Optional[str]:
    """An off-policy policy replays; an on-policy one has no buffer."""
    return None if lookup("policy.on_policy") else "naive"


ENV_REGISTRY: Registry[Callable[..., object]] = Registry("env", "stride.envs", plugins="stride.zoo")
ENV_MANAGER_REGISTRY: Registry[Callable[..., object]] = Registry(
    "env manager", "stride.envs", section=Section("env.manager", "env_manager", "base"))
POLICY_REGISTRY: Registry[Callable[..., object]] = Registry("policy", "stride.policy")
MODEL_REGISTRY: Registry[Callable[..., nn.Module]] = Registry("model", "stride.model")
BUFFER_REGISTRY: Registry[Callable[..., object]] = Registry(
    "replay buffer", "stride.data", section=Section("policy.other.replay_buffer", "replay_buffer", _buffer_type))
COLLECTOR_REGISTRY: Registry[Callable[..., object]] = Registry(
    "collector", "stride.worker", section=Section("policy.collect.collector", "collector", _collector_type))
LEARNER_REGISTRY: Registry[Callable[..., object]] = Registry(
    "learner", "stride.worker", section=Section("policy.learn.learner", "learner", "base", record_type=False))
EVALUATOR_REGISTRY: Registry[Callable[..., object]] = Registry(
    "evaluator", "stride.worker", section=Section("policy.eval.evaluator", "evaluator", "base", record_type=False))
WRAPPER_REGISTRY: Registry[Callable[..., object]] = Registry("model wrapper", "stride.model")
REWARD_MODEL_REGISTRY: Registry[Callable[..., object]] = Registry(
    "reward model", "stride.reward_model", section=Section("reward_model", "reward_model", None))
LEAGUE_REGISTRY: Registry[Callable[..., object]] = Registry("league", "stride.league", section=Section("league", "league", None))

ALL_REGISTRIES = (ENV_REGISTRY, ENV_MANAGER_REGISTRY, POLICY_REGISTRY, MODEL_REGISTRY, BUFFER_REGISTRY,
                  COLLECTOR_REGISTRY, LEARNER_REGISTRY, EVALUATOR_REGISTRY, WRAPPER_REGISTRY, REWARD_MODEL_REGISTRY,
                  LEAGUE_REGISTRY)


def import_components() -> None:
    """Import every package that fills a registry (the built-in envs, policies, models, workers)."""
    for registry in ALL_REGISTRIES:
        registry.load()
