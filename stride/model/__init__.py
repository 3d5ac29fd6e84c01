"""Models (templates per algorithm family) and model wrappers."""

from .template import DQN, QAC
from .wrapper import model_wrap, IModelWrapper
from .template import VAC, QAC
from .template import VAC, QAC

__all__ = ["DQN", "model_wrap", "IModelWrapper", "QAC", "VAC"]
