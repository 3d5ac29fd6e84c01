"""Env managers: step N envs in this process (``base``), in worker processes (``subprocess``,
``async_subprocess``), or as a native batched env (``vector``); ``MultiAgentManager`` shows each
(env, agent) of agent-keyed envs as an env."""

from .async_subprocess import AsyncSubprocessEnvManager
from .base import BaseEnvManager, create_env_manager
from .checks import NonFiniteError, ObservationShapeError
from .multi_agent import MultiAgentManager
from .subprocess import SyncSubprocessEnvManager
from .vector import VectorEnvManager

__all__ = ["BaseEnvManager", "SyncSubprocessEnvManager", "AsyncSubprocessEnvManager", "VectorEnvManager",
           "create_env_manager", "NonFiniteError", "ObservationShapeError", "MultiAgentManager"]
