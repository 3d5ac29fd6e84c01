"""Process, descriptor and shared-memory probes for the env-manager tests."""

from __future__ import annotations

import os
import time

import psutil

from tests.processes import alive


def worker_children() -> set:
    """Pids of this process's children, the long-lived forkserver and resource tracker excepted."""
    out = set()
    for p in psutil.Process().children(recursive=True):
        try:
            cmd = " ".join(p.cmdline())
            if "forkserver" in cmd or "resource_tracker" in cmd or p.status() == psutil.STATUS_ZOMBIE:
                continue
        except psutil.Error:
            continue
        out.add(p.pid)
    return out


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def shm_entries() -> set:
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def _alive(pid: int) -> bool:
    try:
        return alive(psutil.Process(pid))
    except psutil.Error:
        return False


def gone(pids, within: float = 5.0) -> bool:
    """True once none of ``pids`` is alive (zombies count as gone), waiting up to ``within`` s."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return not any(_alive(p) for p in pids)
