"""Rate limiters: keep the learner's samples and the collector's inserts in a chosen ratio.

Reverb's model (``MinSize``, ``SampleToInsertRatio``: the advanced buffer's rate control and the
parallel pipeline's replay ratio; Reverb's ``Queue`` / ``Stack`` had no caller here) with Reverb's counters
and validation: the limiter tracks ``error = inserts * samples_per_insert - samples`` and refuses
any insert or sample that would move it outside ``[min_diff, max_diff]``; samples are also refused
while the table holds fewer than ``min_size_to_sample`` items, and inserts are always allowed
until it does.

How it differs, on purpose:

* **Non-blocking.** Reverb blocks the caller on a condition variable; in a single-process loop
  (Stride's serial pipeline) that is a deadlock. Here ``can_insert(n)`` / ``can_sample(n)`` answer
  at once, ``insert(n)`` / ``sample(n)`` register events and raise :class:`RateLimitedError`
  (changing nothing) if they would break the limit, and ``max_inserts()`` / ``max_samples()``
  say how many are allowed right now so a loop can size its next batch or switch to the other side.
* DI-engine's ``ThruputController`` decays its counters over wall-clock seconds, so its behaviour
  depends on machine speed and is not reproducible; this one counts events only, and its
  ``state_dict`` resumes exactly.
* ``delete(n)`` and ``reset()`` are registered (Reverb does this inside the table), so eviction
  can move a table back into the "fill up" stage as in Reverb.
"""

from __future__ import annotations

import math
import sys
import warnings
from typing import Callable, Dict, Mapping, Tuple, Union

from stride.utils.errors import StrideError

__all__ = ["RateLimiter", "RateLimitedError", "MinSize", "SampleToInsertRatio"]

_UNBOUNDED = 2.0**53  # beyond this a count is reported as math.inf


class RateLimitedError(StrideError, RuntimeError):
    """An insert or sample was refused by the rate limiter (nothing was registered)."""


def _count(n: int, what: str) -> int:
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise ValueError(f"number of {what} must be a non-negative integer, got {n!r}")
    return int(n)


class RateLimiter:
    """Reverb's general limiter: ``min_diff <= inserts * samples_per_insert - samples <= max_diff``."""

    def __init__(self, samples_per_insert: float, min_size_to_sample: int, min_diff: float, max_diff: float) -> None:
        samples_per_insert = float(samples_per_insert)
        if not (samples_per_insert > 0 and math.isfinite(samples_per_insert)):
            raise ValueError(f"samples_per_insert ({samples_per_insert}) must be > 0 and finite")
        if isinstance(min_size_to_sample, bool) or int(min_size_to_sample) != min_size_to_sample or min_size_to_sample < 1:
            raise ValueError(f"min_size_to_sample ({min_size_to_sample}) must be a positive integer")
        min_diff, max_diff = float(min_diff), float(max_diff)
        if math.isnan(min_diff) or math.isnan(max_diff) or min_diff > max_diff:
            raise ValueError(f"min_diff ({min_diff}) must be <= max_diff ({max_diff})")
        self.samples_per_insert = samples_per_insert
        self.min_size_to_sample = int(min_size_to_sample)
        self.min_diff = min_diff
        self.max_diff = max_diff
        self.inserts = 0
        self.samples = 0
        self.deletes = 0

    # ---- queries ------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Items in the table as far as the limiter knows (inserts - deletes)."""
        return self.inserts - self.deletes

    @property
    def error(self) -> float:
        """Reverb's cursor: ``inserts * samples_per_insert - samples``."""
        return self.inserts * self.samples_per_insert - self.samples

    def can_insert(self, n: int = 1) -> bool:
        """Whether ``n`` inserts may happen now (Reverb's ``CanInsert``)."""
        n = _count(n, "inserts")
        if self.size + n <= self.min_size_to_sample:  # inserts are free until the table is warm
            return True
        return (self.inserts + n) * self.samples_per_insert - self.samples <= self.max_diff

    def can_sample(self, n: int = 1) -> bool:
        """Whether ``n`` samples may happen now (Reverb's ``CanSample``)."""
        n = _count(n, "samples")
        if self.size < self.min_size_to_sample:
            return False
        return self.inserts * self.samples_per_insert - self.samples - n >= self.min_diff

    def max_inserts(self) -> float:
        """The largest ``n`` with ``can_insert(n)`` (``math.inf`` when unbounded)."""
        free = self.min_size_to_sample - self.size
        bound = (self.max_diff + self.samples) / self.samples_per_insert - self.inserts
        if bound >= _UNBOUNDED:
            return math.inf
        return float(self._largest(max(free, math.floor(bound), 0), self.can_insert))

    def max_samples(self) -> float:
        """The largest ``n`` with ``can_sample(n)`` (``math.inf`` when unbounded)."""
        if self.size < self.min_size_to_sample:
            return 0.0
        bound = self.error - self.min_diff
        if bound >= _UNBOUNDED:
            return math.inf
        return float(self._largest(max(math.floor(bound), 0), self.can_sample))

    @staticmethod
    def _largest(guess: int, allowed: Callable[[int], bool]) -> int:
        """Fix a float-computed bound by +-1 steps so that it is exactly the largest allowed n."""
        while guess > 0 and not allowed(guess):
            guess -= 1
        while allowed(guess + 1):
            guess += 1
        return guess

    # ---- events -------------------------------------------------------------------------------
    def insert(self, n: int = 1, force: bool = False) -> None:
        """Register ``n`` inserts; raises :class:`RateLimitedError` (registering nothing) if refused.

        ``force=True`` registers them even past ``max_diff``: the items exist already (an
        asynchronous producer was let go by ``can_insert`` before it knew its batch's exact size,
        as the parallel pipeline's collectors are); further inserts stay refused until samples
        bring the error back."""
        if force:
            self.inserts += _count(n, "inserts")
            return
        if not self.can_insert(n):
            raise RateLimitedError(
                f"{self!r} refuses {n} insert(s): error {self.error:g} would exceed max_diff {self.max_diff:g}; "
                f"sample first (max_inserts()={self.max_inserts():g})"
            )
        self.inserts += int(n)

    def sample(self, n: int = 1) -> None:
        """Register ``n`` samples; raises :class:`RateLimitedError` (registering nothing) if refused."""
        if not self.can_sample(n):
            if self.size < self.min_size_to_sample:
                why = f"the table holds {self.size} < min_size_to_sample={self.min_size_to_sample} items"
            else:
                why = f"error {self.error:g} would fall below min_diff {self.min_diff:g}"
            raise RateLimitedError(f"{self!r} refuses {n} sample(s): {why}; insert first (max_samples()={self.max_samples():g})")
        self.samples += int(n)

    def delete(self, n: int = 1) -> None:
        """Register ``n`` deletions (evictions); never refused, but cannot exceed the table size."""
        n = _count(n, "deletes")
        if n > self.size:
            raise ValueError(f"cannot delete {n} items from a table of {self.size}")
        self.deletes += n

    def reset(self, inserted: int = 0) -> None:
        """The table was cleared: forget all counts (as Reverb does on ``Table.reset``); ``inserted``
        items already in it (e.g. loaded from a file) count as inserted."""
        self.inserts = _count(inserted, "inserts")
        self.samples = self.deletes = 0

    # ---- state --------------------------------------------------------------------------------
    def state_dict(self) -> Dict[str, float]:
        """Parameters and counters as plain numbers."""
        return {
            "samples_per_insert": self.samples_per_insert,
            "min_size_to_sample": self.min_size_to_sample,
            "min_diff": self.min_diff,
            "max_diff": self.max_diff,
            "inserts": self.inserts,
            "samples": self.samples,
            "deletes": self.deletes,
        }

    def load_state_dict(self, state: Mapping[str, float]) -> None:
        """Restore the counters; the parameters in ``state`` must match this limiter's."""
        for key in ("samples_per_insert", "min_size_to_sample", "min_diff", "max_diff"):
            if float(state[key]) != float(getattr(self, key)):
                raise ValueError(f"state has {key}={state[key]}, this limiter has {getattr(self, key)}")
        self.inserts, self.samples, self.deletes = int(state["inserts"]), int(state["samples"]), int(state["deletes"])

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(samples_per_insert={self.samples_per_insert:g}, "
            f"min_size_to_sample={self.min_size_to_sample}, min_diff={self.min_diff:g}, max_diff={self.max_diff:g})"
        )


class MinSize(RateLimiter):
    """Refuse samples until the table holds ``min_size_to_sample`` items; otherwise allow everything."""

    def __init__(self, min_size_to_sample: int) -> None:
        if isinstance(min_size_to_sample, bool) or int(min_size_to_sample) != min_size_to_sample or min_size_to_sample < 1:
            raise ValueError(f"min_size_to_sample ({min_size_to_sample}) must be a positive integer")
        super().__init__(1.0, min_size_to_sample, -sys.float_info.max, sys.float_info.max)


class SampleToInsertRatio(RateLimiter):
    """Keep ``samples / inserts`` near ``samples_per_insert`` once ``min_size_to_sample`` items exist.

    ``error_buffer`` is a number (allowed range ``offset +- error_buffer`` with
    ``offset = samples_per_insert * min_size_to_sample``, so the ratio counts only what happens
    after warm-up) or an explicit ``(min_diff, max_diff)``. Validation is Reverb's: the range must
    be at least ``2 * max(1, samples_per_insert)`` wide, and must not lie above the offset.
    """

    def __init__(
        self,
        samples_per_insert: float,
        min_size_to_sample: int,
        error_buffer: Union[float, Tuple[float, float]],
    ) -> None:
        samples_per_insert = float(samples_per_insert)
        if not (samples_per_insert > 0 and math.isfinite(samples_per_insert)):
            raise ValueError(f"samples_per_insert ({samples_per_insert}) must be > 0 and finite")
        if isinstance(min_size_to_sample, bool) or int(min_size_to_sample) != min_size_to_sample or min_size_to_sample < 1:
            raise ValueError(f"min_size_to_sample ({min_size_to_sample}) must be a positive integer")
        offset = samples_per_insert * min_size_to_sample
        if isinstance(error_buffer, bool):
            raise ValueError(f"error_buffer must be a number or a (min_diff, max_diff) pair, got {error_buffer!r}")
        if isinstance(error_buffer, (int, float)):
            min_diff, max_diff = offset - float(error_buffer), offset + float(error_buffer)
        else:
            try:
                min_diff, max_diff = (float(v) for v in error_buffer)
            except (TypeError, ValueError):
                raise ValueError(f"error_buffer must be a number or a (min_diff, max_diff) pair, got {error_buffer!r}") from None
        if not max_diff - min_diff >= 2 * max(1.0, samples_per_insert):
            raise ValueError(
                f"error_buffer range [{min_diff:g}, {max_diff:g}] is narrower than 2 * max(1, samples_per_insert) = "
                f"{2 * max(1.0, samples_per_insert):g}; it could block samples and/or inserts completely"
            )
        if min_diff > offset:
            raise ValueError(
                f"min_diff {min_diff:g} is above samples_per_insert * min_size_to_sample = {offset:g}: "
                "no sample could ever happen once min_size_to_sample items are inserted"
            )
        if max_diff < offset:
            warnings.warn(
                f"max_diff {max_diff:g} is below samples_per_insert * min_size_to_sample = {offset:g}: inserts will be "
                "refused as soon as the table is warm until samples bring the error down (a deadlock for a blocking "
                "limiter; here the loop must sample when can_insert() is False)",
                stacklevel=2,
            )
        super().__init__(samples_per_insert, min_size_to_sample, min_diff, max_diff)
