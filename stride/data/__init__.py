"""Data: column storage, replay buffers behind one protocol, and RL-Flow's adders, selectors and rate limiters."""

from .storage import ColumnStorage
from .frame_storage import FrameStackStorage
from .buffer import (
    NaiveReplayBuffer, AdvancedReplayBuffer, EpisodeReplayBuffer, FileStorage, BufferMonitor, create_buffer, ReplayBuffer, Ticket,
)
from .selectors import (
    UniformSelector, PrioritizedSelector, FIFOSelector, LIFOSelector,
    SelectorKeyError, EmptySelectorError,
)
from .rate_limiters import RateLimiter, MinSize, SampleToInsertRatio, RateLimitedError
from .adders import SequenceAdder, TransitionAdder, NStepTransitionAdder, EpisodeAdder, episode_end

__all__ = [
    "ColumnStorage", "FrameStackStorage", "NaiveReplayBuffer", "AdvancedReplayBuffer", "EpisodeReplayBuffer", "FileStorage", "BufferMonitor",
    "create_buffer", "ReplayBuffer", "Ticket",
    "UniformSelector", "PrioritizedSelector", "FIFOSelector", "LIFOSelector",
    "SelectorKeyError", "EmptySelectorError", "RateLimiter", "MinSize", "SampleToInsertRatio",
    "RateLimitedError", "SequenceAdder", "TransitionAdder", "NStepTransitionAdder", "EpisodeAdder", "episode_end",
]
