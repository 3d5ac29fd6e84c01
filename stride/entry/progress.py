"""The terminal progress bar: env steps, train iterations, last evaluation return, speed."""

from __future__ import annotations

import math
import sys
import time
from typing import Optional


class ProgressBar:
    """A tqdm bar over env steps (shown only on a terminal)."""

    def __init__(self, enabled: bool, total: float, initial: int = 0) -> None:
        self._bar = None
        if enabled and sys.stderr.isatty():
            from tqdm import tqdm

            self._bar = tqdm(total=None if math.isinf(total) else int(total), initial=initial, unit=" env steps",
                             desc="stride", dynamic_ncols=True, leave=True)
        self._last = initial
        self._t = time.perf_counter()

    def update(self, envstep: int, train_iter: int, eval_return: Optional[float]) -> None:
        if self._bar is None:
            return
        now = time.perf_counter()
        if now - self._t < 0.2 and envstep - self._last < 10000:
            return
        self._bar.update(envstep - self._last)
        self._last, self._t = envstep, now
        ret = "-" if eval_return is None else f"{eval_return:.1f}"
        self._bar.set_postfix_str(f"train_iter={train_iter} eval_return={ret}", refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
