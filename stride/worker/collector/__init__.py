"""Serial collectors: by sample and by episode."""

from .sample_collector import SampleCollector
from .episode_collector import EpisodeCollector
from .base import create_collector
from .warm_up import collect_at_random

__all__ = ["SampleCollector", "EpisodeCollector", "create_collector", "collect_at_random"]
