"""The learner and its hooks."""

from .learner import BaseLearner
from .hooks import LearnerHook, LoadCkptHook, LogShowHook, SaveCkptHook

__all__ = ["BaseLearner", "LearnerHook", "LoadCkptHook", "LogShowHook", "SaveCkptHook"]
