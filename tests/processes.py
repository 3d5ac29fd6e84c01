"""Process probes shared by the tests that kill, hang and reap real processes.

A process can exit between any two calls on its ``psutil.Process``; every probe here treats "gone
while we looked" as gone, so a test never fails on the race it is checking for.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import psutil


def alive(proc: psutil.Process) -> bool:
    """True while ``proc`` runs; a zombie, or a process gone mid-probe, is not alive."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def still_alive(procs: Iterable[psutil.Process], timeout: float = 60.0) -> list[psutil.Process]:
    """The processes of ``procs`` still alive after waiting up to ``timeout`` s for all to go."""
    deadline = time.monotonic() + timeout
    left = [p for p in procs if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = [p for p in left if alive(p)]
    return left
