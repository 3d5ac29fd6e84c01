"""Run a command until the parent's pipe closes: ``python -m stride.entry.parallel.watchdog [--remove DIR [--keep-logs RUN]] -- CMD...``.

The parallel pipeline starts its local Ray instance (``ray start --head --block``) under this
watchdog and holds the write end of its stdin. When the pipeline ends -- normally, on Ctrl-C, or
SIGKILLed, when no code of its own runs -- the kernel closes that pipe, the watchdog reads EOF and
sends the command SIGTERM (``ray start --block`` then stops every Ray process of the instance,
actors included), then SIGKILL after a grace period, kills whatever of the instance is left in its
session (the pipeline starts the watchdog as a session leader: a ``ray start`` killed half-way
leaves its GCS and raylet behind otherwise), and removes ``--remove DIR`` (the instance's temp
folder: logs, sockets, spilled objects) once the command has ended, after copying its logs (``ray start``'s
output, ``ray_start.log``, and the session's ``logs`` folder) into ``--keep-logs RUN``'s ``log/ray/`` when the
run's folder ``RUN`` exists. A local ``ray.init()`` has no such guard: its head processes outlive a SIGKILLed driver. No Ray import here: the watchdog is a few MiB.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from typing import List, Optional

GRACE_SECONDS = 30.0


def run(cmd: List[str], grace: float = GRACE_SECONDS) -> int:
    """Start ``cmd``; stop it when stdin reaches EOF; return its exit code."""
    child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)

    def wait_for_eof() -> None:
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except (OSError, ValueError):
            pass
        if child.poll() is None:
            _stop(child, grace)

    threading.Thread(target=wait_for_eof, daemon=True).start()
    def forward(signum: int, frame: object) -> None:  # a signal to the watchdog stops the child the same way
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, forward)
    try:
        return child.wait()
    finally:
        if child.poll() is None:  # pragma: no cover  (only when wait itself was interrupted)
            _stop(child, grace)


def _stop(child: "subprocess.Popen[bytes]", grace: float) -> None:
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(grace)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def session_members(sid: int) -> List[int]:
    """The ids of the processes in session ``sid`` (Linux ``/proc``; empty elsewhere)."""
    found: List[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
        except OSError:  # ended meanwhile
            continue
        fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces
        if len(fields) > 3 and fields[3] == str(sid):
            found.append(int(name))
    return found


def end_session(sid: int, settle: float = 5.0) -> None:
    """SIGKILL every process of session ``sid`` but the caller (what a stopped instance left), and
    wait up to ``settle`` s until they are gone (a signalled process lives on for a moment)."""
    killed = []
    for pid in session_members(sid):
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError:
                pass
    deadline = time.monotonic() + settle
    while killed and time.monotonic() < deadline:
        killed = [pid for pid in killed if _running(pid)]
        if killed:
            time.sleep(0.05)


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().decode(errors="replace").rpartition(")")[2].split()[:1] != ["Z"]
    except OSError:
        return False


def keep_logs(temp_dir: str, run_dir: str) -> None:
    """Copy a stopped instance's logs from ``temp_dir`` into ``<run_dir>/log/ray/`` (nothing when the
    run's folder does not exist: the run never opened it)."""
    if not os.path.isdir(run_dir):
        return
    dest = os.path.join(run_dir, "log", "ray")
    try:
        os.makedirs(dest, exist_ok=True)
        start = os.path.join(temp_dir, "ray_start.log")
        if os.path.isfile(start):
            shutil.copyfile(start, os.path.join(dest, "ray_start.log"))
        logs = os.path.join(temp_dir, "session_latest", "logs")
        if os.path.isdir(logs):
            shutil.copytree(logs, dest, dirs_exist_ok=True, ignore_dangling_symlinks=True)
    except OSError as e:  # a full disk, say: the logs are a convenience, the cleanup is not
        print(f"stride: Ray's logs were not kept in {dest}: {e}", file=sys.stderr)


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    remove: Optional[str] = None
    keep: Optional[str] = None
    if args[:1] == ["--remove"] and len(args) >= 2:
        remove, args = args[1], args[2:]
    if args[:1] == ["--keep-logs"] and len(args) >= 2:
        keep, args = args[1], args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        print("usage: python -m stride.entry.parallel.watchdog [--remove DIR [--keep-logs RUN]] [--] CMD [ARGS...]",
              file=sys.stderr)
        return 2
    try:
        rc = run(args)
    finally:
        if os.getsid(0) == os.getpid():  # started as a session leader: the session is the instance's
            end_session(os.getpid())
        if remove is not None:
            if keep is not None:
                keep_logs(remove, keep)
            shutil.rmtree(remove, ignore_errors=True)
    return 128 - rc if rc < 0 else rc  # a command ended by signal N exits 128 + N, as a shell reports it


if __name__ == "__main__":
    sys.exit(main())
