"""The worker process of the subprocess env managers: a few envs, one pipe each way, one command loop.

:func:`worker_main` builds the envs, reports :class:`~.protocol.Ready` on the socket pair the
process starts with (which also carries the descriptors: shared-memory block, then the two pipe
ends), and answers the commands of ``protocol.py`` in order until :class:`~.protocol.Close` or EOF;
what each command does to the envs is ``hosted.py``'s business. A Step whose envs ended episodes
is answered before those envs are reset in place, and the resets get a reply of their own, so the
parent times each step against ``step_timeout`` and each reset against ``reset_timeout`` (one
reply for both could not tell a hung step from a slow reset).

Between commands the child polls its pipe for up to ``spin_s`` before it blocks (the next command
of a stepping loop usually arrives sooner than a blocked process is woken). The child ignores
SIGINT (the parent owns Ctrl-C), is killed by the kernel when its parent dies, even while stuck
in env code (``lifeline.py``: the fork server, which exits when the main process does), and
exits on pipe EOF.
"""

from __future__ import annotations

import os
import signal
from multiprocessing.connection import Connection
from multiprocessing.reduction import recv_handle
from typing import Any, Callable, Dict, List, Optional, Tuple

import cloudpickle

from ...utils.errors import StrideError
from ..base_env import BaseEnv
from .hosted import HostedEnvs, crash, user_error
from .lifeline import die_with_parent, forkserver_guarded
from .protocol import (BuildFailed, Call, Close, Command, Ready, Replay, Reply, Reset, Seed, Step, decode_command,
                       encode)
from .shm import LayoutEntry, ObsBlock
from .spin import SpinWait, make_poller
from .wire import recv_blob, send_blob


def worker_main(conn: Connection, env_fns_blob: bytes, env_seeds: List[Optional[int]], dynamic_seed: bool,
                shm_layout: Optional[List[LayoutEntry]], spin_s: float = 0.0, own_processes: int = 2,
                env_ids: Optional[List[int]] = None, finite: bool = True,
                parent: Optional[Tuple[Optional[int], bool]] = None) -> None:
    """Run the envs built from ``env_fns_blob`` (cloudpickled factories) until ``Close`` or EOF.

    ``env_ids``: the manager's indices of these envs (for messages); ``finite``: check rewards and
    observations for NaN and inf (observation shapes are always checked); ``parent``: the pid this
    process must die with (None: its parent, the fork server) and whether that process started it
    from its main thread (``lifeline.die_with_parent``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent_pid, from_main_thread = parent if parent is not None else (None, True)
    die_with_parent(parent_pid, from_main_thread)
    started = _start(conn, env_fns_blob, env_seeds, dynamic_seed, shm_layout)
    if started is None:
        return
    envs, block, fd, fd_out = started
    hosted = HostedEnvs(envs, block, env_ids if env_ids is not None else range(len(envs)), finite)
    try:
        _serve(hosted, fd, fd_out, SpinWait(spin_s, own_processes))
    finally:
        hosted.close()
        conn.close()
        os.close(fd)
        os.close(fd_out)


def _start(conn: Connection, env_fns_blob: bytes, env_seeds: List[Optional[int]], dynamic_seed: bool,
           shm_layout: Optional[List[LayoutEntry]]) -> Optional[Tuple[List[BaseEnv], Optional[ObsBlock], int, int]]:
    """Receive the descriptors, build and seed the envs, report ``Ready``: ``(envs, block, fd in,
    fd out)``, or None after reporting ``BuildFailed`` (the parent raises a clear error)."""
    envs: List[BaseEnv] = []
    fd = fd_out = -1
    try:
        block = ObsBlock(shm_layout, len(env_seeds), fd=recv_handle(conn)) if shm_layout is not None else None
        fd, fd_out = recv_handle(conn), recv_handle(conn)  # commands in, replies out (one-way pipes)
        for fn, seed in zip(cloudpickle.loads(env_fns_blob), env_seeds):
            env = fn()
            if seed is not None:
                env.seed(seed, dynamic_seed=dynamic_seed)
            envs.append(env)
        conn.send_bytes(encode(Ready(os.getpid(), forkserver_guarded())))
    except BaseException as e:  # report and exit
        try:
            conn.send_bytes(encode(BuildFailed(crash(e).text)))
        except Exception:
            pass
        for f in (fd, fd_out):
            if f >= 0:
                os.close(f)
        return None
    return envs, block, fd, fd_out


def _serve(hosted: HostedEnvs, fd: int, fd_out: int, spin: SpinWait) -> None:
    """Answer commands in order until ``Close``, EOF, or a reply the parent can no longer read."""
    handlers: Dict[type, Callable[[Any], Reply]] = {
        Reset: hosted.reset, Replay: hosted.replay, Seed: hosted.seed, Call: hosted.call}
    poller = make_poller(fd) if spin.spin_s > 0 else None
    while True:
        cmd = _next_command(fd, poller, spin)
        if cmd is None or type(cmd) is Close:
            return
        reply: Reply
        if type(cmd) is Step:
            reply = stepped = hosted.step(cmd)
            if stepped.in_place:  # answer now: the resets are timed as resets, not as part of the step
                if not _send(fd_out, stepped):
                    return
                reply = hosted.reset_in_place(cmd, stepped.in_place)
        else:
            handler = handlers.get(type(cmd))
            if handler is None:
                raise TypeError(f"unknown command {cmd!r}")  # a bug: exit, the parent sees the death
            reply = handler(cmd)
        if not _send(fd_out, reply):
            return


def _send(fd_out: int, reply: Reply) -> bool:
    """Send one reply; False when the parent is gone."""
    try:
        blob = encode(reply)
    except Exception as e:  # e.g. an info dict holding a lock
        blob = encode(reply.all_failed(user_error(StrideError(f"cannot send an env's result to the parent: {e!r}"))))
    try:
        send_blob(fd_out, blob)
    except OSError:
        return False
    return True


def _next_command(fd: int, poller: Any, spin: SpinWait) -> Optional[Command]:
    """The next command (None on EOF), polled for a moment before blocking (spin.py)."""
    blocking = poller is None or not spin.poll([poller], spin.spin_s)
    if blocking:
        spin.blocking()
    try:
        blob = recv_blob(fd)
    except (EOFError, OSError):
        return None
    if blocking:
        spin.blocked()
    return decode_command(blob)

