"""Policies: the base class with its three modes, and one file per algorithm."""

from .base_policy import Policy
from .dqn import DQNPolicy

__all__ = ["Policy", "DQNPolicy"]
