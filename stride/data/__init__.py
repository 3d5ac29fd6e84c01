"""Data: column storage and replay buffers (plus RL-Flow adders, selectors and rate limiters)."""

from .storage import ColumnStorage
from .buffer import NaiveReplayBuffer, create_buffer

__all__ = ["ColumnStorage", "NaiveReplayBuffer", "create_buffer"]
