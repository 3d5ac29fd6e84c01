"""The watchdog stops its command when its stdin closes (the parent ended, SIGKILL included)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import psutil

from stride.entry.parallel import watchdog
from tests.processes import alive

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


def _child(guard: subprocess.Popen) -> psutil.Process:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        children = psutil.Process(guard.pid).children()
        if children:
            return children[0]
        time.sleep(0.05)
    raise AssertionError("the watchdog started no child")


def _start() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "stride.entry.parallel.watchdog", "--", *SLEEPER],
                            stdin=subprocess.PIPE)


def test_closing_stdin_stops_the_command():
    guard = _start()
    child = _child(guard)
    guard.stdin.close()
    assert guard.wait(30) == 128 + signal.SIGTERM  # the command was stopped by SIGTERM
    assert not alive(child)


def test_the_parent_killed_closes_the_pipe_too():
    # a parent that holds the pipe and is SIGKILLed: the kernel closes its end
    parent = subprocess.Popen([sys.executable, "-c",
                               "import subprocess, sys, time\n"
                               f"g = subprocess.Popen([sys.executable, '-m', 'stride.entry.parallel.watchdog', '--', "
                               f"*{SLEEPER!r}], stdin=subprocess.PIPE)\n"
                               "print(g.pid, flush=True); time.sleep(120)"],
                              stdout=subprocess.PIPE, text=True)
    guard = psutil.Process(int(parent.stdout.readline()))
    child = None
    deadline = time.monotonic() + 30
    while child is None and time.monotonic() < deadline:
        kids = guard.children()
        child = kids[0] if kids else None
        time.sleep(0.05)
    assert child is not None
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    _, left = psutil.wait_procs([guard, child], timeout=30)
    assert not left


def test_remove_deletes_the_folder_once_the_command_ended(tmp_path):
    folder = tmp_path / "ray-temp"
    (folder / "logs").mkdir(parents=True)
    guard = subprocess.Popen([sys.executable, "-m", "stride.entry.parallel.watchdog", "--remove", str(folder), "--",
                              *SLEEPER], stdin=subprocess.PIPE)
    _child(guard)
    assert folder.is_dir()
    guard.stdin.close()
    guard.wait(30)
    assert not folder.exists()


def test_usage_without_a_command(capsys):
    assert watchdog.main([]) == 2
    assert "usage" in capsys.readouterr().err
