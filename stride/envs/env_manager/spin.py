"""Poll-then-block waiting on pipes, shared by the parent (``pool.py``) and the workers (``worker.py``).

Why: a cheap env's reply (or the parent's next command) arrives within tens of microseconds, but
a process blocked in the kernel needs about as long again to be woken and scheduled (pipe
ping-pong on this repository's 2-core VM: 40-58 us per round trip blocking, 4-5 us polling); the
peers (SB3, Gymnasium, Tianshou) pay that wake-up twice per env per step. Polling only pays off
while the partner runs on another core, so :class:`SpinWait` stops polling by itself:

* a spin that runs out (a slow env, a parent busy training) switches polling off until a blocking
  wait is short again, so slow envs cost no polling per step;
* a ``sched_yield`` that keeps the CPU away for long means other processes want this core: on a
  contended box a poller loses the wake-up priority a blocked process gets, so polling backs off
  for a second.
"""

from __future__ import annotations

import os
import select
import time
from typing import Any, List

HAS_POLL = hasattr(select, "poll")  # not on Windows
CAN_SPIN = HAS_POLL and hasattr(os, "sched_yield")
_CONTENDED_S = 50e-6  # a yield that kept the CPU away this long: the core is shared
_BACKOFF_S = 1.0  # then block (no polling) for this long


def make_poller(fileno: int) -> Any:
    """A ``select.poll`` object watching ``fileno`` for input (a cheap, syscall-only readiness check)."""
    poller = select.poll()
    poller.register(fileno, select.POLLIN)
    return poller


class SpinWait:
    """Decides whether to poll before blocking, and polls (see the module docstring)."""

    __slots__ = ("spin_s", "enabled", "resume_at", "_blocked_at")

    def __init__(self, spin_s: float) -> None:
        self.spin_s = max(float(spin_s), 0.0) if CAN_SPIN else 0.0
        self.enabled = self.spin_s > 0  # recent waits were short enough to catch by polling
        self.resume_at = 0.0  # no polling before this perf_counter time (contended core)
        self._blocked_at = 0.0

    def poll(self, pollers: List[Any], budget: float) -> bool:
        """Poll ``pollers`` for up to ``min(budget, spin_s)`` s; True as soon as one is readable."""
        if not self.enabled:
            return False
        clock, yield_cpu = time.perf_counter, os.sched_yield
        now = clock()
        if now < self.resume_at:
            return False
        limit = min(budget, self.spin_s)
        end = now + limit
        while True:
            for p in pollers:
                if p.poll(0):
                    return True
            before = clock()
            if before >= end:
                self.enabled = limit < self.spin_s  # only a full spin that ran out switches it off
                return False
            yield_cpu()
            after = clock()
            if after - before > _CONTENDED_S:
                self.resume_at = after + _BACKOFF_S
                return False

    def blocking(self) -> None:
        """Call before a blocking wait (polling was off or came back empty)."""
        self._blocked_at = time.perf_counter()

    def blocked(self) -> None:
        """Call after it: a wait shorter than the spin turns polling back on."""
        if self.spin_s > 0:
            self.enabled = time.perf_counter() - self._blocked_at < self.spin_s
