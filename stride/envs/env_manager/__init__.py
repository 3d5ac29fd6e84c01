"""Env managers: step N envs in this process (``base``) or in worker processes (``subprocess``,
``async_subprocess``)."""

from .base import BaseEnvManager, create_env_manager
from .subprocess import AsyncSubprocessEnvManager, SyncSubprocessEnvManager

__all__ = ["BaseEnvManager", "SyncSubprocessEnvManager", "AsyncSubprocessEnvManager", "create_env_manager"]
