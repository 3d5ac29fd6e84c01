"""Name → class tables, one per ``create_config`` key.

Unlike DI-engine's twenty registries with ``import_names`` strings, Stride has a few tables that
fill when their subpackage is imported; an unknown name fails with the closest valid one.

Each table names the package that holds its built-ins (``Registry('policy', 'stride.policy')``)
and imports it, by name, on the first lookup: a lower layer (``stride.config``) can look up a
policy or a learner without importing the layers above it.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, Iterator, List, Optional, overload

from .errors import UnknownNameError, unknown_name_message


class Registry:
    """A named table of classes or factories, filled by the package ``package`` (if given)."""

    def __init__(self, kind: str, package: Optional[str] = None) -> None:
        self.kind = kind
        self.package = package
        self._table: Dict[str, Any] = {}
        self._loaded = package is None

    @overload
    def register(self, name: str) -> Callable[[Any], Any]: ...

    @overload
    def register(self, name: str, obj: Any) -> Any: ...

    def register(self, name: str, obj: Any = None) -> Any:
        """Register ``obj`` under ``name``; usable as ``@REGISTRY.register('name')``."""

        def _do(o: Any) -> Any:
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

    def get(self, name: str) -> Any:
        """The object registered under ``name``; a clear error naming the valid choices otherwise."""
        try:
            return self._table[name]
        except (KeyError, TypeError):
            pass
        self.load()
        try:
            return self._table[name]
        except (KeyError, TypeError):
            raise UnknownNameError(unknown_name_message(self.kind, name, self._table)) from None

    def build(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Instantiate the class registered under ``name``."""
        return self.get(name)(*args, **kwargs)

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


ENV_REGISTRY = Registry("env", "stride.envs")
ENV_MANAGER_REGISTRY = Registry("env manager", "stride.envs")
POLICY_REGISTRY = Registry("policy", "stride.policy")
MODEL_REGISTRY = Registry("model", "stride.model")
BUFFER_REGISTRY = Registry("replay buffer", "stride.data")
COLLECTOR_REGISTRY = Registry("collector", "stride.worker")
LEARNER_REGISTRY = Registry("learner", "stride.worker")
EVALUATOR_REGISTRY = Registry("evaluator", "stride.worker")
WRAPPER_REGISTRY = Registry("model wrapper", "stride.model")

ALL_REGISTRIES = (ENV_REGISTRY, ENV_MANAGER_REGISTRY, POLICY_REGISTRY, MODEL_REGISTRY, BUFFER_REGISTRY,
                  COLLECTOR_REGISTRY, LEARNER_REGISTRY, EVALUATOR_REGISTRY, WRAPPER_REGISTRY)


def import_components() -> None:
    """Import every package that fills a registry (the built-in envs, policies, models, workers)."""
    for registry in ALL_REGISTRIES:
        registry.load()
