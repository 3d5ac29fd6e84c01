"""``RateControl``: push/sample ratio control of ``AdvancedReplayBuffer``, never blocking.

Wraps one of Reverb's limiters from :mod:`stride.data.rate_limiters` (``min_size``,
``sample_to_insert_ratio``) the way a single-process loop can use it: a push the limiter refuses
is cut to what it allows (the newest items are kept, the rest dropped, counted and warned in the
log), a sample it refuses returns ``None`` (counted, warned). Nothing ever waits, so the serial
pipeline cannot deadlock (Reverb's blocking limiter would), and since the limiter counts events,
not seconds (DI-engine's ``ThruputController`` decays over wall-clock time), runs are reproducible.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Dict, Mapping, Optional

from ...config.view import ConfigView, setting
from ...utils.errors import ConfigError
from ..rate_limiters import MinSize, RateLimiter, SampleToInsertRatio
from .monitor import BufferMonitor

LIMITER_TYPES = ("none", "min_size", "sample_to_insert_ratio")


@dataclass(frozen=True)
class RateLimiterConfig(ConfigView):
    """``replay_buffer.rate_limiter``: push/sample ratio control (never blocks)."""

    #: (str) push/sample ratio control: 'none', 'min_size' or 'sample_to_insert_ratio' (Reverb's
    #: limiters, non-blocking: a refused push is dropped and counted, a refused sample returns None).
    type: str = setting("none", LIMITER_TYPES)
    #: (float) target sampled items per pushed item ('sample_to_insert_ratio').
    samples_per_insert: float = setting(1.0, "(0, inf)")
    #: (int) samples are refused until the buffer holds this many items.
    min_size_to_sample: int = setting(1, "[1, inf)")
    #: (float) allowed deviation of inserts * samples_per_insert - samples around its warm-up offset.
    error_buffer: float = setting(100.0, "[0, inf)")


def build_limiter(cfg: RateLimiterConfig) -> Optional[RateLimiter]:
    """The limiter named by ``cfg.type`` (``'none'``: None)."""
    if cfg.type == "none":
        return None
    if cfg.type == "min_size":
        return MinSize(cfg.min_size_to_sample)
    if cfg.type == "sample_to_insert_ratio":
        return SampleToInsertRatio(float(cfg.samples_per_insert), cfg.min_size_to_sample, float(cfg.error_buffer))
    raise ConfigError(f"unknown rate_limiter.type '{cfg.type}'; valid choices: {', '.join(LIMITER_TYPES)}")


class RateControl:
    """A limiter plus the buffer's bookkeeping of what it refused."""

    def __init__(self, limiter: RateLimiter, monitor: BufferMonitor, logger: logging.Logger) -> None:
        self.limiter = limiter
        self.monitor = monitor
        self.logger = logger

    @classmethod
    def from_config(cls, cfg: RateLimiterConfig, monitor: BufferMonitor,
                    logger: logging.Logger) -> Optional["RateControl"]:
        limiter = build_limiter(cfg)
        return None if limiter is None else cls(limiter, monitor, logger)

    def admit_push(self, n: int) -> int:
        """How many of ``n`` pushed items may go in now (the caller keeps the newest that many)."""
        if self.limiter.can_insert(n):
            return n
        allowed = int(min(self.limiter.max_inserts(), n))
        dropped = n - allowed
        mon = self.monitor
        mon.push_refused += dropped
        self.logger.warning(f"[{mon.instance_name}] rate limiter refused {dropped} of {n} pushed item(s) "
                            f"(dropped; {mon.push_refused} so far); sample more or push less")
        return allowed

    def may_sample(self, size: int) -> bool:
        """Whether a sample of ``size`` may happen now (a refusal is counted and warned); the buffer
        registers it with :meth:`sampled` once the batch is drawn (a draw can still come back short)."""
        if not self.limiter.can_sample(size):
            mon = self.monitor
            mon.sample_refused += 1
            self.logger.warning(f"[{mon.instance_name}] rate limiter refused a sample of {size} "
                                f"({mon.sample_refused} so far); push more data first")
            return False
        return True

    def sampled(self, size: int) -> None:
        self.limiter.sample(size)

    def inserted(self, n: int) -> None:
        self.limiter.insert(n)

    def deleted(self, n: int) -> None:
        self.limiter.delete(n)

    def reset(self, size: int = 0) -> None:
        """Forget the history; ``size`` items already in the buffer count as inserted."""
        self.limiter.reset(size)

    def state_dict(self) -> Dict[str, float]:
        return self.limiter.state_dict()

    def load_state_dict(self, state: Mapping[str, float]) -> None:
        self.limiter.load_state_dict(state)
