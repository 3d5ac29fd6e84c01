"""Models (templates per algorithm family) and model wrappers."""

from .template import DQN, QAC
from .wrapper import model_wrap, IModelWrapper

__all__ = ["DQN", "model_wrap", "IModelWrapper", "QAC"]
