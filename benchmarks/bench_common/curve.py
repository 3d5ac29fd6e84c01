"""A peer contestant's learning curve (``curves/sb3_curve.py``, ``curves/tianshou_curve.py``): the 10-episode
evaluations every contestant gets, their CPU kept out of train CPU, and the curve so far written after each
evaluation (``<out>.partial``) so a run stopped before its budget still reports it."""

from __future__ import annotations

import json
import os
import time
from typing import Callable, List, Optional

import numpy as np

from .evaluate import evaluate_batched
from .proc import cpu, log


class CurveRecorder:
    """Evaluations of one run: ``evaluate(env_step)`` appends a curve point; ``train_cpu()`` is process CPU
    since construction less the evaluations' CPU."""

    def __init__(self, contestant: str, case: str, seed: int, budget: int, env_id: str, episodes: int,
                 act: Callable[[np.ndarray], np.ndarray], out: Optional[str]) -> None:
        self.contestant, self.case, self.seed, self.budget = contestant, case, seed, budget
        self.env_id, self.episodes, self.act, self.out = env_id, episodes, act, out
        self.curve: List[dict] = []
        self.eval_cpu = 0.0
        self.cpu0, self.wall0 = cpu(), time.perf_counter()

    def train_cpu(self) -> float:
        return cpu() - self.cpu0 - self.eval_cpu

    def wall(self) -> float:
        return time.perf_counter() - self.wall0

    def evaluate(self, env_step: int) -> None:
        c0 = cpu()
        returns = evaluate_batched(self.act, self.episodes, 5, 10_000 + self.seed, self.env_id)
        self.eval_cpu += cpu() - c0
        self.curve.append({"env_step": env_step, "return_mean": float(np.mean(returns)),
                           "return_min": float(np.min(returns)), "return_max": float(np.max(returns)),
                           "train_cpu_s": self.train_cpu(), "wall_s": self.wall()})
        log(f"[{self.contestant}] env_step={env_step} return={self.curve[-1]['return_mean']:.2f} "
            f"train_cpu={self.curve[-1]['train_cpu_s']:.0f}s")
        if self.out:
            with open(self.out + ".partial.tmp", "w") as f:
                json.dump({"contestant": self.contestant, "case": self.case, "seed": self.seed,
                           "budget": self.budget, "curve": self.curve}, f)
            os.replace(self.out + ".partial.tmp", self.out + ".partial")

    def final(self, episodes: int) -> List[float]:
        """The policy at the budget on ``episodes`` fresh episodes (seeds no evaluation used)."""
        return evaluate_batched(self.act, episodes, 8, 30_000 + self.seed, self.env_id)

    def done(self) -> None:
        """The run's result is written: its partial curve goes."""
        if self.out and os.path.exists(self.out + ".partial"):
            os.remove(self.out + ".partial")
