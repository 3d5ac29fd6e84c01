"""Environments (a Gymnasium superset) and the managers that step many of them."""

from .base_env import BaseEnv, BaseEnvTimestep
from .gymnasium_env import GymnasiumEnv
from .minatar_env import MinAtarEnv
from .minigrid_env import MiniGridEnv
from .agent_dict import AgentDict
from .pettingzoo_env import PettingZooEnv
from .wrappers import ChannelFirst
from .env_manager import (AsyncSubprocessEnvManager, BaseEnvManager, MultiAgentManager, NonFiniteError,
                          ObservationShapeError, SyncSubprocessEnvManager, VectorEnvManager, create_env_manager)

__all__ = ["BaseEnv", "BaseEnvTimestep", "GymnasiumEnv", "MinAtarEnv", "MiniGridEnv", "PettingZooEnv", "AgentDict",
           "ChannelFirst", "BaseEnvManager", "MultiAgentManager", "VectorEnvManager",
           "SyncSubprocessEnvManager", "AsyncSubprocessEnvManager", "create_env_manager", "NonFiniteError",
           "ObservationShapeError"]
