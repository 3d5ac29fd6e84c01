"""Model templates, one per family of algorithms."""

from .q_learning import DQN
from .qac import QAC
from .vac import VAC

__all__ = ["DQN", "QAC", "VAC"]
