"""The random warm-up's collect: uniformly random actions through a serial collector."""

from __future__ import annotations

from typing import Optional, Sequence

from ...policy.modes import CollectMode
from ...policy.random_policy import random_collect_mode
from ...utils.errors import ConfigError
from .base import SerialCollectorBase
from .episode_collector import EpisodeCollector
from .sample_collector import SampleCollector


def collect_at_random(collector: SerialCollectorBase, collect_mode: CollectMode, seed: int,
                      n_sample: Optional[int] = None) -> Sequence[object]:
    """One collect of uniformly random actions (:func:`~stride.policy.random_policy.random_collect_mode`
    over ``collect_mode``'s transition processing), drawn from a generator seeded by ``seed``:
    ``n_sample`` samples of a sample collector (None: its own ``n_sample``), or one episode. The random
    warm-up's collect, in the serial loops (``stride.entry.serial_entry.WarmUp``) and in the collectors
    of ``-m parallel`` / ``-m dist`` alike. Samples collected past ``n_sample`` stay for the collector's
    next collect, as between the policy's collects (an off-policy buffer takes both)."""
    random = random_collect_mode(collector.action_space, collect_mode, seed=seed)
    if isinstance(collector, SampleCollector):
        collector.reset_policy(random, keep_samples=True)
        try:
            return collector.collect(n_sample=n_sample)
        finally:
            collector.reset_policy(collect_mode, keep_samples=True)
    if isinstance(collector, EpisodeCollector):
        collector.reset_policy(random)
        try:
            return collector.collect(n_episode=1)
        finally:
            collector.reset_policy(collect_mode)
    raise ConfigError(f"the random warm-up (policy.random_collect_size) needs a sample or episode collector, "
                      f"not {type(collector).__name__}")
