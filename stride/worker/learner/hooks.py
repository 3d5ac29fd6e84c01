"""Learner hooks: small objects called at ``before_run``, ``after_run``, ``before_iter``, ``after_iter``.

A hook receives the learner and reads its named properties (``train_iter``, ``envstep``,
``log_buffer``, ...) -- never ``locals()``. Lower ``priority`` runs first.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Dict, Optional, Protocol

from ..protocols import ScalarWriter

POSITIONS = ("before_run", "after_run", "before_iter", "after_iter")


class HookHost(Protocol):
    """What a hook may read and call on the learner that runs it (``BaseLearner`` is one)."""

    logger: logging.Logger
    log_buffer: Dict[str, Any]
    last_log: Dict[str, float]
    tb_logger: Optional[ScalarWriter]  # where scalars go; None: nowhere

    @property
    def train_iter(self) -> int:
        """Optimisation steps done."""

    @property
    def envstep(self) -> int:
        """Env steps collected, as last told to the learner."""

    def save_checkpoint(self) -> Optional[str]:
        """Write a checkpoint; its path (None when the learner has no experiment folder)."""

    def load_checkpoint(self, path: str) -> None:
        """Restore the state saved in ``path``."""


class LearnerHook:
    """Base hook: runs every ``freq`` calls at its position."""

    def __init__(self, name: str, position: str, priority: int = 100, freq: int = 1) -> None:
        if position not in POSITIONS:
            raise ValueError(f"unknown hook position '{position}'; valid choices: {', '.join(POSITIONS)}")
        self.name, self.position, self.priority, self.freq = name, position, priority, max(int(freq), 1)

    def __call__(self, learner: HookHost) -> None:
        raise NotImplementedError


class SaveCkptHook(LearnerHook):
    """Save ``ckpt/iteration_<n>.pth.tar`` every ``freq`` iterations (or at the end of a run)."""

    def __call__(self, learner: HookHost) -> None:
        if self.position == "after_iter" and learner.train_iter % self.freq != 0:
            return
        learner.save_checkpoint()


class LoadCkptHook(LearnerHook):
    """Load a checkpoint before the run (``load_ckpt_before_run`` path)."""

    def __init__(self, path: str, **kwargs: object) -> None:
        super().__init__("load_ckpt", "before_run", priority=20)
        self.path = path

    def __call__(self, learner: HookHost) -> None:
        if self.path:
            learner.load_checkpoint(self.path)


class LogShowHook(LearnerHook):
    """Average the policy's monitored variables over ``freq`` iterations; write text and TensorBoard."""

    def __init__(self, freq: int) -> None:
        super().__init__("log_show", "after_iter", priority=20, freq=freq)
        self._sums: Dict[str, float] = {}
        self._count = 0

    def __call__(self, learner: HookHost) -> None:
        for k, v in learner.log_buffer.items():
            if isinstance(v, (int, float)):
                self._sums[k] = self._sums.get(k, 0.0) + v
        self._count += 1
        if learner.train_iter % self.freq == 0:
            self.flush(learner)

    def flush(self, learner: HookHost) -> None:
        """Write the averages accumulated so far (also called when the run ends)."""
        if not self._count:
            return
        avg = {k: v / self._count for k, v in self._sums.items()}
        learner.last_log = avg
        learner.logger.info(
            f"[learner] train_iter={learner.train_iter} envstep={learner.envstep} "
            + " ".join(f"{k}_avg={v:.6g}" for k, v in avg.items())
        )
        tb = learner.tb_logger
        if tb is not None:
            for k, v in avg.items():
                tb.add_scalar(f"learner_iter/{k}", v, learner.train_iter)
                tb.add_scalar(f"learner_step/{k}", v, learner.envstep)
        self._sums, self._count = {}, 0


class LogFlushHook(LearnerHook):
    """At ``after_run``: write what the log hook accumulated since its last write."""

    def __init__(self, log_hook: LogShowHook) -> None:
        super().__init__("log_flush", "after_run", priority=10)
        self._log_hook = log_hook

    def __call__(self, learner: HookHost) -> None:
        self._log_hook.flush(learner)


def ckpt_dir(exp_name: str) -> str:
    return os.path.join(exp_name, "ckpt")
