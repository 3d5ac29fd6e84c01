"""Model templates, one per family of algorithms."""

from .q_learning import DQN

__all__ = ["DQN"]
