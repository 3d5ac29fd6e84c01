"""Environments (a Gymnasium superset) and the managers that step many of them."""

from .base_env import BaseEnv, BaseEnvTimestep
from .gymnasium_env import GymnasiumEnv
from .minigrid_env import MiniGridEnv
from .env_manager import (AsyncSubprocessEnvManager, BaseEnvManager, NonFiniteError, ObservationShapeError,
                          SyncSubprocessEnvManager, create_env_manager)

__all__ = ["BaseEnv", "BaseEnvTimestep", "GymnasiumEnv", "MiniGridEnv", "BaseEnvManager", "SyncSubprocessEnvManager", "AsyncSubprocessEnvManager",
           "create_env_manager", "NonFiniteError", "ObservationShapeError"]
