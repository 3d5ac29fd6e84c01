"""Workers: collectors, evaluator, learner, and (re-exported from ``stride.data``) replay buffers."""

from .collector import SampleCollector, EpisodeCollector, create_collector
from .evaluator import BaseSerialEvaluator, EvalAbandoned, VectorEvalMonitor
from .learner import BaseLearner, LearnerHook
from ..data.buffer import NaiveReplayBuffer, AdvancedReplayBuffer, EpisodeReplayBuffer, create_buffer

__all__ = [
    "SampleCollector", "EpisodeCollector", "create_collector", "BaseSerialEvaluator", "EvalAbandoned", "VectorEvalMonitor",
    "BaseLearner", "LearnerHook", "NaiveReplayBuffer", "AdvancedReplayBuffer",
    "EpisodeReplayBuffer", "create_buffer",
]
