"""A run's clocks: train CPU-seconds (the process's CPU time less its evaluations'), evaluation
CPU- and wall-seconds, and wall seconds -- what ``result.json``, ``progress.csv`` and
``league.csv`` report and the benchmarks compare.

One implementation for every serial entry (``EvalRecorder`` of the serial and offline pipelines,
the league's ``LeagueEvaluation``). Its ``state_dict`` goes into the run's checkpoints, so a
resumed run's clocks go on from the saved ones: its figures count the whole run, not only the
last process (DI-engine, SB3 and Tianshou restart their timers on resume).
"""

from __future__ import annotations

import time
from typing import Dict, Mapping

from ..utils.narrow import as_float

_KEYS = ("train_cpu_seconds", "eval_cpu_seconds", "eval_wall_seconds", "wall_seconds")


class RunClock:
    """Train / evaluation CPU-seconds and wall seconds since the run started (see the module docstring)."""

    def __init__(self) -> None:
        self.cpu0, self.wall0 = time.process_time(), time.perf_counter()
        self.eval_cpu = 0.0   # CPU-seconds of the evaluations
        self.eval_wall = 0.0  # their wall seconds (training waits for them: a training rate leaves them out)

    def train_cpu(self) -> float:
        """CPU seconds spent so far outside evaluations."""
        return time.process_time() - self.cpu0 - self.eval_cpu

    def wall(self) -> float:
        """Wall seconds so far."""
        return time.perf_counter() - self.wall0

    def add_cpu(self, cpu_seconds: float) -> None:
        """CPU-seconds other processes spent training for the run (a parallel run's actors), counted
        as this process's (a resumed run's saved clock holds them)."""
        self.cpu0 -= cpu_seconds

    def add_eval(self, cpu_seconds: float, wall_seconds: float = 0.0) -> None:
        """One evaluation's cost, taken out of the training's."""
        self.eval_cpu += cpu_seconds
        self.eval_wall += wall_seconds

    def state_dict(self) -> Dict[str, object]:
        """The clocks so far."""
        return {"train_cpu_seconds": self.train_cpu(), "eval_cpu_seconds": self.eval_cpu,
                "eval_wall_seconds": self.eval_wall, "wall_seconds": self.wall()}

    def load_state_dict(self, state_dict: Mapping[str, object]) -> None:
        """Go on from saved clocks: this process's time is added to them (a checkpoint from before
        ``eval_wall_seconds`` was kept reads it as 0)."""
        train, evaluate, eval_wall, wall = (as_float(state_dict.get(k, 0.0), f"checkpoint 'clock.{k}'") for k in _KEYS)
        self.eval_cpu, self.eval_wall = evaluate, eval_wall
        self.cpu0 = time.process_time() - train - evaluate
        self.wall0 = time.perf_counter() - wall
