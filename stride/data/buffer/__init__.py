"""Replay buffers (the seeds import them from ``stride.worker``, which re-exports them), all behind
one protocol, :class:`ReplayBuffer`: a batch comes with a :class:`Ticket`, the priorities go back with it."""

from .protocol import ReplayBuffer, Ticket
from .naive import NaiveReplayBuffer, create_buffer
from .advanced import AdvancedReplayBuffer, FileStorage
from .episode import EpisodeReplayBuffer
from .monitor import BufferMonitor
from .demo_mix import DemoMixBuffer

__all__ = ["NaiveReplayBuffer", "AdvancedReplayBuffer", "EpisodeReplayBuffer", "FileStorage", "BufferMonitor",
           "create_buffer", "DemoMixBuffer", "ReplayBuffer", "Ticket"]
