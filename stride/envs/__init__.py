"""Environments (a Gymnasium superset) and the managers that step many of them."""

from .base_env import BaseEnv, BaseEnvTimestep
from .gymnasium_env import GymnasiumEnv
from .env_manager import (AsyncSubprocessEnvManager, BaseEnvManager, NonFiniteError, ObservationShapeError,
                          SyncSubprocessEnvManager, create_env_manager)

__all__ = ["BaseEnv", "BaseEnvTimestep", "GymnasiumEnv", "BaseEnvManager", "SyncSubprocessEnvManager", "AsyncSubprocessEnvManager",
           "create_env_manager", "NonFiniteError", "ObservationShapeError"]
