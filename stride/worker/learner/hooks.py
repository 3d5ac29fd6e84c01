"""Learner hooks: small objects called at ``before_run``, ``after_run``, ``before_iter``, ``after_iter``.

A hook receives the learner and reads its named properties (``train_iter``, ``envstep``,
``log_buffer``, ...) -- never ``locals()``. Lower ``priority`` runs first.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Dict, List, Optional, Protocol, Tuple

import torch

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
    """Average the policy's monitored variables over ``freq`` iterations; write text and TensorBoard.

    A value may be a number or a one-element tensor (a loss, detached): tensors are kept as they come
    and read at the write, all of them in one host transfer per device -- a policy on a GPU never waits
    for its kernels between writes (``.item()`` per step would wait every step). The averages are the
    same numbers as summing ``.item()`` of each step's value."""

    #: tensors kept per variable before they are summed on their device (bounds memory when ``freq`` is large)
    FOLD = 4096

    def __init__(self, freq: int) -> None:
        super().__init__("log_show", "after_iter", priority=20, freq=freq)
        self._sums: Dict[str, float] = {}
        self._pending: Dict[str, List[torch.Tensor]] = {}  # tensor values since the last write
        self._keys: Dict[str, None] = {}  # every variable seen since the last write, in order of appearance
        self._count = 0

    def __call__(self, learner: HookHost) -> None:
        for k, v in learner.log_buffer.items():
            if isinstance(v, torch.Tensor):
                if v.numel() != 1:
                    continue
                pending = self._pending.setdefault(k, [])
                pending.append(v.detach())
                if len(pending) >= self.FOLD:  # (on the device: still no wait)
                    self._pending[k] = [torch.stack([t.reshape(()) for t in pending]).double().sum()]
            elif isinstance(v, (int, float)):
                self._sums[k] = self._sums.get(k, 0.0) + v
            else:
                continue
            self._keys.setdefault(k)
        self._count += 1
        if learner.train_iter % self.freq == 0:
            self.flush(learner)

    def flush(self, learner: HookHost) -> None:
        """Write the averages accumulated so far (also called when the run ends)."""
        if not self._count:
            return
        sums = dict(self._sums)
        for k, v in _tensor_sums(self._pending).items():
            sums[k] = sums.get(k, 0.0) + v
        avg = {k: sums[k] / self._count for k in self._keys}
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
        self._sums, self._pending, self._keys, self._count = {}, {}, {}, 0


def _tensor_sums(pending: Dict[str, List[torch.Tensor]]) -> Dict[str, float]:
    """Each variable's one-element tensors summed in order as Python floats (as ``.item()`` each and
    ``+``), read with one host transfer per device."""
    columns: Dict[torch.device, List[Tuple[str, torch.Tensor]]] = {}
    for k, values in pending.items():
        column = torch.stack([t.reshape(()) for t in values]).double()
        columns.setdefault(column.device, []).append((k, column))
    out: Dict[str, float] = {}
    for group in columns.values():
        flat = torch.cat([c for _, c in group]).tolist()  # the transfer (waits for the kernels once)
        i = 0
        for k, c in group:
            n = c.numel()
            out[k] = sum(flat[i:i + n])
            i += n
    return out


class LogFlushHook(LearnerHook):
    """At ``after_run``: write what the log hook accumulated since its last write."""

    def __init__(self, log_hook: LogShowHook) -> None:
        super().__init__("log_flush", "after_run", priority=10)
        self._log_hook = log_hook

    def __call__(self, learner: HookHost) -> None:
        self._log_hook.flush(learner)


def ckpt_dir(exp_name: str) -> str:
    return os.path.join(exp_name, "ckpt")
