"""Low-level helpers shared by every layer: registries, errors, seeding, logging, timing."""

from .errors import StrideError, ConfigError, UnknownNameError, InvalidActionError
from .registry import (
    Registry,
    ENV_REGISTRY,
    ENV_MANAGER_REGISTRY,
    POLICY_REGISTRY,
    MODEL_REGISTRY,
    BUFFER_REGISTRY,
    COLLECTOR_REGISTRY,
    WRAPPER_REGISTRY,
)

__all__ = [
    "StrideError", "ConfigError", "UnknownNameError", "InvalidActionError", "Registry",
    "ENV_REGISTRY", "ENV_MANAGER_REGISTRY", "POLICY_REGISTRY", "MODEL_REGISTRY",
    "BUFFER_REGISTRY", "COLLECTOR_REGISTRY", "WRAPPER_REGISTRY",
]
