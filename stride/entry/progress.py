"""What a running pipeline shows: a tqdm bar on a terminal, progress lines everywhere else.

A training job's output usually goes to a file (CI, ``nohup``, a notebook's captured cell, a
cluster job): there a bar draws nothing until the end, so the user cannot tell a slow run from a
hung one. When stdout is not a terminal, a line with env steps, train iterations, speed and the
last evaluation is printed every ``period`` seconds (10 by default) instead.
"""

from __future__ import annotations

import math
import sys
import time
from typing import IO, Any, Optional


class ProgressBar:
    """A tqdm bar over env steps on a terminal (stderr), and every ``period`` seconds a progress
    line on ``stream`` (default stdout) when that is not a terminal. ``enabled=False``: nothing."""

    def __init__(self, enabled: bool, total: float, initial: int = 0, period: float = 10.0,
                 stream: Optional[IO[str]] = None, unit: str = "env steps") -> None:
        self._bar: Any = None
        self._stream = stream if stream is not None else sys.stdout
        self._lines = enabled and not _isatty(self._stream)
        if enabled and _isatty(sys.stderr):
            from tqdm import tqdm

            self._bar = tqdm(total=None if math.isinf(total) else int(total), initial=initial, unit=f" {unit}",
                             desc="stride", dynamic_ncols=True, leave=True)
        self._period = float(period)
        self._unit = unit  # what the bar counts: env steps (online runs) or train iterations (offline ones)
        self._last = initial
        self._t = time.perf_counter()
        self._line_t, self._line_step = self._t, initial

    def update(self, envstep: int, train_iter: int, eval_return: Optional[float]) -> None:
        now = time.perf_counter()
        if self._lines and now - self._line_t >= self._period:
            speed = (envstep - self._line_step) / max(now - self._line_t, 1e-9)
            ret = "-" if eval_return is None else f"{eval_return:.2f}"
            print(f"stride: env_step={envstep} train_iter={train_iter} {speed:.0f} {self._unit}/s last eval={ret}",
                  file=self._stream, flush=True)
            self._line_t, self._line_step = now, envstep
        if self._bar is None:
            return
        if now - self._t < 0.2 and envstep - self._last < 10000:
            return
        self._bar.update(envstep - self._last)
        self._last, self._t = envstep, now
        ret = "-" if eval_return is None else f"{eval_return:.1f}"
        self._bar.set_postfix_str(f"train_iter={train_iter} eval_return={ret}", refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced streams
        return False
