"""Replay buffers (the seeds import them from ``stride.worker``, which re-exports them)."""

from .naive import NaiveReplayBuffer, create_buffer

__all__ = ["NaiveReplayBuffer", "create_buffer"]
