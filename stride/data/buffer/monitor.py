"""``BufferMonitor``: what went into and out of a replay buffer, as counts and rates.

The seeds' AdvancedReplayBuffer counts pushed / sampled / removed items over a period and shows
them (with the sampled items' use counts and staleness) in the text log and TensorBoard. Here the
counts are plain integers updated by the buffer (deterministic, saved in ``state_dict``); rates are
items per wall-clock second since the previous log line (informational only: nothing depends on
them, unlike DI-engine's ``ThruputController`` whose decisions depend on machine speed).
Logging is driven by sample calls (every ``log_freq`` of them), so there is no background thread.
"""

from __future__ import annotations

import time
from typing import Dict, Mapping, Optional, Protocol, TypedDict


from ...utils.log import build_logger

REMOVE_REASONS = ("overwrite", "max_use", "staleness", "clear", "frames")  # frames: a frame storage needed them


class ScalarWriter(Protocol):
    """Where TensorBoard scalars go (``torch.utils.tensorboard.SummaryWriter`` and the like)."""

    def add_scalar(self, tag: str, scalar_value: float, global_step: int) -> object: ...


class MonitorState(TypedDict):
    """:meth:`BufferMonitor.state_dict`: the counters (plain ints)."""

    push: int
    sample: int
    sample_calls: int
    removed: Dict[str, int]
    push_refused: int
    sample_refused: int
    sample_insufficient: int


class BufferMonitor:
    """Counters of a buffer's traffic; ``info()`` for the learner/pipeline, ``log(step)`` to text + TB."""

    def __init__(self, tb_logger: Optional[ScalarWriter] = None, exp_name: Optional[str] = None, instance_name: str = "buffer",
                 log_freq: int = 100) -> None:
        self.tb_logger = tb_logger
        self.instance_name = instance_name
        self.log_freq = int(log_freq)
        self.logger = build_logger(exp_name, instance_name)
        self.reset()

    def reset(self) -> None:
        self.push = 0  # items accepted by push (including those a too-long push overwrote at once)
        self.sample = 0  # items handed out (a batch of 64 counts 64)
        self.sample_calls = 0  # successful sample / sample_batch calls
        self.removed = {r: 0 for r in REMOVE_REASONS}
        self.push_refused = 0  # items dropped by the rate limiter
        self.sample_refused = 0  # sample calls refused by the rate limiter
        self.sample_insufficient = 0  # sample calls answered None: too few items
        self.last_use_mean = 0.0  # over the latest sampled batch
        self.last_staleness_mean = 0.0
        self.last_priority_mean = 0.0
        self._last_log_time = time.perf_counter()
        self._last_log_counts = (0, 0, 0)

    # ---- updates from the buffer ---------------------------------------------------------------
    @property
    def removed_total(self) -> int:
        return sum(self.removed.values())

    # ---- reporting -------------------------------------------------------------------------------
    def info(self) -> Dict[str, float]:
        """Counts, rates since the previous :meth:`log`, and the latest batch's use/staleness/priority."""
        now = time.perf_counter()
        dt = max(now - self._last_log_time, 1e-9)
        p0, s0, r0 = self._last_log_counts
        out: Dict[str, float] = {
            "pushed": self.push, "sampled": self.sample, "removed": self.removed_total,
            "push_per_sec": (self.push - p0) / dt, "sample_per_sec": (self.sample - s0) / dt,
            "remove_per_sec": (self.removed_total - r0) / dt,
            "sample_push_ratio": self.sample / self.push if self.push else 0.0,
            "push_refused": self.push_refused, "sample_refused": self.sample_refused,
            "sample_insufficient": self.sample_insufficient,
            "use_mean": self.last_use_mean, "staleness_mean": self.last_staleness_mean,
            "priority_mean": self.last_priority_mean,
        }
        for reason, n in self.removed.items():
            out[f"removed_{reason}"] = n
        return out

    def log(self, step: int, count: Optional[int] = None) -> Dict[str, float]:
        """Write :meth:`info` (plus ``count``) to the text log and TensorBoard as ``buffer_*`` scalars."""
        info = self.info()
        if count is not None:
            info["count"] = count
        self.logger.info(f"[{self.instance_name}] step={step} " + " ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in info.items()))
        if self.tb_logger is not None:
            for k, v in info.items():
                self.tb_logger.add_scalar(f"{self.instance_name}_iter/buffer_{k}", v, step)
        self._last_log_time = time.perf_counter()
        self._last_log_counts = (self.push, self.sample, self.removed_total)
        return info

    # ---- state -------------------------------------------------------------------------------
    def state_dict(self) -> MonitorState:
        return {"push": self.push, "sample": self.sample, "sample_calls": self.sample_calls,
                "removed": dict(self.removed), "push_refused": self.push_refused,
                "sample_refused": self.sample_refused, "sample_insufficient": self.sample_insufficient}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self.reset()
        counts = {k: int(v) for k, v in state.items() if isinstance(v, (int, float))}  # (a checkpoint's plain numbers)
        removed = state["removed"]
        if not isinstance(removed, Mapping):
            raise TypeError(f"monitor state 'removed' must be a mapping, got {type(removed).__name__}")
        self.push, self.sample, self.sample_calls = counts["push"], counts["sample"], counts["sample_calls"]
        self.removed.update({str(k): int(v) for k, v in removed.items()})
        self.push_refused = counts["push_refused"]
        self.sample_refused = counts["sample_refused"]
        self.sample_insufficient = counts["sample_insufficient"]
        self._last_log_counts = (self.push, self.sample, self.removed_total)
