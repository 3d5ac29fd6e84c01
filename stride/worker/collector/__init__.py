"""Serial collectors: by sample and by episode."""

from .sample_collector import SampleCollector
from .episode_collector import EpisodeCollector
from .base import create_collector

__all__ = ["SampleCollector", "EpisodeCollector", "create_collector"]
