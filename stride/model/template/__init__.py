"""Model templates, one per family of algorithms."""

from .q_learning import DQN
from .qac import QAC
from .recurrent import DRQN
from .vac import VAC

__all__ = ["DQN", "DRQN", "QAC", "VAC"]
