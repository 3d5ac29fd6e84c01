"""Models (templates per algorithm family) and model wrappers."""

from .template import DQN, DRQN, QAC, VAC
from .wrapper import model_wrap, IModelWrapper

__all__ = ["DQN", "DRQN", "QAC", "VAC", "model_wrap", "IModelWrapper"]
