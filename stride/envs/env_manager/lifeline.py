"""Worker processes die with the process that started them, whatever they are doing.

A worker notices a dead parent by pipe EOF only when its Python thread gets back to reading the
pipe; one stuck inside env code (a step that sleeps, loops in C or holds the GIL) never does. So
the kernel does it: ``prctl(PR_SET_PDEATHSIG)`` makes it signal a process when its parent exits.

With the default ``forkserver`` start method the workers' parent is the fork server, not the
process that runs the manager, and the fork server itself waits for every child to exit before it
does (each child holds a copy of its "alive" pipe). Without help, a SIGKILLed main process leaves
the fork server, the workers stuck in env code and multiprocessing's resource tracker behind
(measured on 8b5a9af: all of them, for good). The chain Stride sets up:

* the fork server imports this module (``set_forkserver_preload``), which asks for a signal when
  the process that started it exits, and exits then (:func:`_guard_forkserver`). It is a
  catchable signal checked against ``getppid()`` rather than SIGKILL because the kernel sends it
  when the *thread* that started the server exits: a manager launched from a short-lived thread
  must not lose its fork server when that thread ends;
* every child the fork server forks gets SIGKILL when the fork server exits, set right after the
  fork (``os.register_at_fork``) before any other code runs, with the usual race check (the
  server already gone: exit at once). The server forks from its only thread, so SIGKILL is safe;
* the resource tracker exits by itself once the last process holding its pipe is gone.

Shared memory: the observation blocks are anonymous ``memfd`` mappings (``shm.py``), freed by the
kernel with the last process that maps them; nothing is named in ``/dev/shm``, so nobody has to
unlink anything after a SIGKILL. Workers started with ``fork`` or ``spawn`` have the main process
as their parent and arm the same signal in :func:`die_with_parent`. Outside Linux none of this is
available and workers rely on pipe EOF (as DI-engine, SB3 and Gymnasium workers always do).
"""

from __future__ import annotations

import inspect
import os
import signal
import sys
from types import FrameType
from typing import Any, Callable, Optional

_PR_SET_PDEATHSIG = 1
_ORPHAN_SIGNAL = signal.SIGUSR2 if hasattr(signal, "SIGUSR2") else None  # catchable: checked, then acted on
PARENT_ENV = "STRIDE_FORKSERVER_PARENT"  # pid of the process starting the fork server (its race check)

_server_guarded = False  # True in a guarded fork server and inherited by the children it forks
_in_server = False  # True in a guarded fork server only (a child clears its copy): only its direct children arm


def _pdeathsig(sig: int) -> bool:
    """``prctl(PR_SET_PDEATHSIG, sig)`` for this process; False where it is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _exit_if_orphaned(parent_pid: int) -> Callable[[int, Optional[FrameType]], None]:
    """A handler for the catchable parent-death signal: exit if ``parent_pid`` is no longer the
    parent (the process died; a thread of it that exited does not count)."""

    def handler(signum: int, frame: Optional[FrameType]) -> None:
        if os.getppid() != parent_pid:
            os._exit(1)

    return handler


def die_with_parent(parent_pid: Optional[int], forked_by_main_thread: bool) -> None:
    """Have the kernel end this process when its parent (``parent_pid``; None: the current one)
    exits, and exit now if it already has.

    ``forked_by_main_thread``: the parent started this process from its main thread, which lives
    as long as the process, so the signal can be SIGKILL (works even while this process is stuck
    in C). Otherwise the signal comes when that thread exits, too: it is a catchable one whose
    handler checks that the parent process is really gone (it needs this process's Python to run).
    """
    if parent_pid is None:
        parent_pid = os.getppid()
    if forked_by_main_thread:
        armed = _pdeathsig(signal.SIGKILL)
    elif _ORPHAN_SIGNAL is not None:
        signal.signal(_ORPHAN_SIGNAL, _exit_if_orphaned(parent_pid))
        armed = _pdeathsig(_ORPHAN_SIGNAL)
    else:
        armed = False
    if armed and os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)


def forkserver_guarded() -> bool:
    """Whether this process is a guarded fork server or was forked by one."""
    return _server_guarded


def _after_fork_in_child(server_pid: int, previous_handler: Any) -> None:
    """In a child of the fork server, right after the fork: SIGKILL when the server exits."""
    global _in_server
    if not _in_server:  # a grandchild (an env in a worker forked): not ours to arm
        return
    _in_server = False
    if _ORPHAN_SIGNAL is not None:  # (set whenever _in_server is)
        signal.signal(_ORPHAN_SIGNAL, previous_handler)  # the server's handler is not the worker's business
    if _pdeathsig(signal.SIGKILL) and os.getppid() != server_pid:
        os._exit(1)


def _guard_forkserver() -> None:
    """In the fork server: exit when the process that started it exits (see the module docstring)."""
    global _server_guarded, _in_server
    expected = os.environ.get(PARENT_ENV)
    parent = int(expected) if expected and expected.isdigit() else os.getppid()
    if _ORPHAN_SIGNAL is None or not sys.platform.startswith("linux"):
        return
    previous = signal.signal(_ORPHAN_SIGNAL, _exit_if_orphaned(parent))
    if not _pdeathsig(_ORPHAN_SIGNAL):
        signal.signal(_ORPHAN_SIGNAL, previous)
        return
    if os.getppid() != parent:  # it died before the signal was armed
        os._exit(1)
    server = os.getpid()
    _server_guarded = _in_server = True
    os.register_at_fork(after_in_child=lambda: _after_fork_in_child(server, previous))


def _imported_by_forkserver() -> bool:
    """Whether this import runs inside ``multiprocessing.forkserver.main`` (its preload)."""
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_code.co_name == "main" and frame.f_globals.get("__name__") == "multiprocessing.forkserver":
            return True
        frame = frame.f_back
    return False


if _imported_by_forkserver():
    _guard_forkserver()
