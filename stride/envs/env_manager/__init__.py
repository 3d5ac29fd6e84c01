"""Env managers: step N envs in this process (``base``) or in worker processes."""

from .base import BaseEnvManager, create_env_manager

__all__ = ["BaseEnvManager", "create_env_manager"]
