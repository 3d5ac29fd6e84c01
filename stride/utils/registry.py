"""Name → class tables, one per ``create_config`` key.

Unlike DI-engine's twenty registries with ``import_names`` strings, Stride has a few tables that
fill when their subpackage is imported; an unknown name fails with the closest valid one.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator

from .errors import UnknownNameError, unknown_name_message


class Registry:
    """A named table of classes or factories."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._table: Dict[str, Any] = {}

    def register(self, name: str, obj: Any = None) -> Any:
        """Register ``obj`` under ``name``; usable as ``@REGISTRY.register('name')``."""

        def _do(o: Any) -> Any:
            if name in self._table and self._table[name] is not o:
                raise ValueError(f"{self.kind} '{name}' is already registered as {self._table[name]!r}")
            self._table[name] = o
            return o

        return _do(obj) if obj is not None else _do

    def get(self, name: str) -> Any:
        """The object registered under ``name``; a clear error naming the valid choices otherwise."""
        try:
            return self._table[name]
        except (KeyError, TypeError):
            raise UnknownNameError(unknown_name_message(self.kind, name, self._table)) from None

    def build(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Instantiate the class registered under ``name``."""
        return self.get(name)(*args, **kwargs)

    def names(self) -> list:
        return sorted(self._table)

    def __contains__(self, name: object) -> bool:
        return name in self._table

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._table))

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()})"


ENV_REGISTRY = Registry("env")
ENV_MANAGER_REGISTRY = Registry("env manager")
POLICY_REGISTRY = Registry("policy")
MODEL_REGISTRY = Registry("model")
BUFFER_REGISTRY = Registry("replay buffer")
COLLECTOR_REGISTRY = Registry("collector")
WRAPPER_REGISTRY = Registry("model wrapper")

