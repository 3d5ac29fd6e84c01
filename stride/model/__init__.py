"""Models (templates per algorithm family) and model wrappers."""

from .template import DQN
from .wrapper import model_wrap, IModelWrapper

__all__ = ["DQN", "model_wrap", "IModelWrapper"]
