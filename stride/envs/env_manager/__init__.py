"""Env managers: step N envs in this process (``base``) or in worker processes (``subprocess``,
``async_subprocess``)."""

from .async_subprocess import AsyncSubprocessEnvManager
from .base import BaseEnvManager, create_env_manager
from .checks import NonFiniteError, ObservationShapeError
from .subprocess import SyncSubprocessEnvManager

__all__ = ["BaseEnvManager", "SyncSubprocessEnvManager", "AsyncSubprocessEnvManager", "create_env_manager",
           "NonFiniteError", "ObservationShapeError"]
