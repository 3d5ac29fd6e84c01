"""Poll-then-block waiting on pipes, shared by the parent (``pool.py``) and the workers (``worker.py``).

Why: a cheap env's reply (or the parent's next command) arrives within tens of microseconds, but
a process blocked in the kernel needs about as long again to be woken and scheduled (pipe
ping-pong on this repository's 2-core VM: 40-58 us per round trip blocking, 4-5 us polling); the
peers (SB3, Gymnasium, Tianshou) pay that wake-up twice per env per step. Polling only pays off
while the partner runs on another core, so :class:`SpinWait` stops polling by itself:

* a spin that runs out (a slow env, a parent busy training) switches polling off until a blocking
  wait is short again, so slow envs cost no polling per step;
* a ``sched_yield`` that keeps the CPU away for long means another process ran on this core. If
  that was the partner (parent and worker often share a core: Linux wakes a pipe reader next to
  its writer) polling is right. If strangers want more CPUs than the machine has (more runnable
  tasks than CPUs and the manager's own processes, at three long yields in a row) a poller loses
  the wake-up priority a blocked process gets, so polling backs off for a second.

Polling is worth more on a VM than on bare metal: a blocked process leaves its virtual CPU idle,
the hypervisor halts it, and waking it again costs a round trip through the host. On this
repository's 2-core VM, 1 worker x 8 CartPole envs ran at 18-26k steps/s when any long yield
stopped polling and at 40-66k with this rule (2 workers x 4: 22-32k against 51-54k); with two
CPU hogs beside it, it backs off and runs as fast as blocking waits.
"""

from __future__ import annotations

import os
import select
import time
from typing import Sequence

HAS_POLL = hasattr(select, "poll")  # not on Windows
CAN_SPIN = HAS_POLL and hasattr(os, "sched_yield")
_CONTENDED_S = 50e-6  # a yield that kept the CPU away this long: someone else ran on this core
_BACKOFF_S = 1.0  # then, if that was a stranger, block (no polling) for this long
_NCPU = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)  # CPUs we may use


def _runnable_tasks(fd: int) -> int:
    """Tasks runnable right now on the whole machine (``/proc/loadavg``'s ``running/total``), -1 if unknown."""
    try:
        return int(os.pread(fd, 128, 0).split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return -1


def _open_loadavg() -> int:
    try:
        return os.open("/proc/loadavg", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return -1


def make_poller(fileno: int) -> select.poll:
    """A ``select.poll`` object watching ``fileno`` for input (a cheap, syscall-only readiness check)."""
    poller = select.poll()
    poller.register(fileno, select.POLLIN)
    return poller


class SpinWait:
    """Decides whether to poll before blocking, and polls (see the module docstring)."""

    __slots__ = ("spin_s", "enabled", "resume_at", "_blocked_at", "_own", "_loadavg", "_sightings")

    def __init__(self, spin_s: float, own_processes: int = 2) -> None:
        self.spin_s = max(float(spin_s), 0.0) if CAN_SPIN else 0.0
        self.enabled = self.spin_s > 0  # recent waits were short enough to catch by polling
        self.resume_at = 0.0  # no polling before this perf_counter time (contended core)
        self._blocked_at = 0.0
        # the manager's own processes (parent + workers): they may all be runnable while polling
        self._own = max(int(own_processes), 1)
        self._loadavg = _open_loadavg() if self.spin_s > 0 else -1
        self._sightings = 0  # long yields in a row that found strangers runnable

    def close(self) -> None:
        """Release the ``/proc/loadavg`` descriptor (also released when the object is collected)."""
        if self._loadavg >= 0:
            os.close(self._loadavg)
            self._loadavg = -1

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _contended(self) -> bool:
        """After a long yield: whether processes other than the manager's own want more CPUs than
        the machine has (then a poller only takes time from them), seen at three long yields in a
        row (a kernel thread that wakes for a moment is no reason to stop); unknown counts as yes."""
        if self._loadavg < 0:
            return True
        n = _runnable_tasks(self._loadavg)
        if n >= 0 and n <= max(_NCPU, self._own):
            self._sightings = 0
            return False
        self._sightings += 1
        if n >= 0 and self._sightings < 3:
            return False
        self._sightings = 0  # after the back-off, contention must be seen three times again
        return True

    def poll(self, pollers: Sequence[select.poll], budget: float) -> bool:
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
            if after - before > _CONTENDED_S and self._contended():
                self.resume_at = after + _BACKOFF_S
                return False

    def blocking(self) -> None:
        """Call before a blocking wait (polling was off or came back empty)."""
        self._blocked_at = time.perf_counter()

    def blocked(self) -> None:
        """Call after it: a wait shorter than the spin turns polling back on."""
        if self.spin_s > 0:
            self.enabled = time.perf_counter() - self._blocked_at < self.spin_s
