"""The worker pool under the subprocess env managers: processes, commands, waiting, faults.

:class:`WorkerPoolEnvManager` owns the worker processes (``envs_per_worker`` envs each, built in
the child from cloudpickled factories, ``forkserver`` by default), their pipes and shared-memory
blocks, the queue of commands each worker has not answered yet, and the one place the parent
waits (:meth:`_pump`: a short spin on the pipes, then ``connection.wait`` on pipes, process
sentinels and deadlines). Fault handling lives here too:

* a dead child (pipe EOF or process sentinel) or one that overruns ``step_timeout`` /
  ``reset_timeout`` (deadlines kept by the parent with ``multiprocessing.connection.wait``, never
  SIGALRM; a command covering k envs may take k times the limit, and resets done in place after
  a step are timed as resets, not as part of the step) is killed and replaced; its warning quotes
  the configured limit and the time it waited; its in-flight episodes are closed with
  ``info['abnormal'] = True`` and the envs it hosted that were waiting for an action are marked
  broken (their next step is abnormal too), never stitched to a new episode;
* failed resets are retried up to ``max_retry`` times, in the same process (``retry_type='reset'``)
  or a new one (``'renew'``), then a clear ``RuntimeError``;
* ``close()`` is idempotent: workers are asked to close, SIGKILLed after a second, and no process,
  descriptor or shared-memory segment is left (children also die with their parent).

What a reply means is the stepping loop's business: subclasses implement :meth:`_dispatch`
(``subprocess.py``: the contract, sync stepping; ``async_subprocess.py``: async stepping).
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait as mp_wait
from multiprocessing.reduction import send_handle
from typing import Any, Callable, Deque, Dict, List, Mapping, Optional, Set, Tuple, cast

import cloudpickle

from ...config.view import setting
from ...utils.errors import StrideError
from ..base_env import ActT, BaseEnv, BaseEnvTimestep, ObsT
from .base import BaseEnvManager, EnvManagerConfig
from .lifeline import PARENT_ENV
from .main_guard import unguarded_main_line
from .protocol import (BuildFailed, Close, Command, Crash, Failure, Ready, Replay, Reply, Reset, Seed, Step, StepReply,
                       decode, decode_reply, encode)
from .shm import LayoutEntry, ObsBlock, obs_layout, shm_available
from .spin import HAS_POLL, SpinWait, make_poller
from .wire import recv_blob, send_blob
from .worker import worker_main

logger = logging.getLogger(__name__)

# imported once by the fork server: workers start in ~10 ms instead of ~0.5 s, and lifeline makes
# the fork server (and so every worker) die with the process that started it
_PRELOAD = ["numpy", "gymnasium", "cloudpickle", "stride.envs.env_manager.lifeline", "stride.envs.env_manager.worker"]
_preload_set = False
_unguarded_warned = False


_KINDS: Dict[type, str] = {Step: "step", Reset: "reset", Replay: "replay", Seed: "seed"}  # else "call"


class PendingCommand:
    """A command sent to a worker whose reply has not arrived yet (``kind``: its record's name in
    lower case, or ``"autoreset"`` for the in-place resets that follow a step's reply)."""

    __slots__ = ("kind", "env_ids", "timeout", "started")

    def __init__(self, kind: str, env_ids: List[int], timeout: Optional[float]) -> None:
        self.kind, self.env_ids, self.timeout = kind, env_ids, timeout
        self.started: Optional[float] = None  # when the worker began on it (it runs commands in order)


class WorkerProcess:
    """One worker process, its pipe, its shared-memory block and its queue of pending commands."""

    __slots__ = ("index", "env_ids", "proc", "conn", "fd", "fd_out", "poller", "block", "pending", "pid")

    def __init__(self, index: int, env_ids: List[int]) -> None:
        self.index, self.env_ids = index, env_ids
        self.proc: Any = None
        self.conn: Any = None  # socket pair: handshake and descriptor passing
        # commands and replies: a one-way pipe each way (wire.py), half the syscall cost of the socket
        self.fd = -1  # replies (read end)
        self.fd_out = -1  # commands (write end)
        self.poller: Any = None  # select.poll on conn: a cheap readiness check for the spin wait
        self.block: Optional[ObsBlock] = None
        self.pending: Deque[PendingCommand] = deque()
        self.pid: Optional[int] = None


def abnormal_timestep(reason: str) -> BaseEnvTimestep[None]:
    """The last timestep of an episode that a crash, a dead or hung worker or a bad value ended."""
    return BaseEnvTimestep(None, 0.0, True, {"abnormal": True, "error": reason})


@dataclass(frozen=True)
class WorkerPoolConfig(EnvManagerConfig):
    """``env.manager`` of the subprocess managers: the worker pool's settings."""

    #: (bool) observations through shared memory (fixed-shape numeric Box / Dict of Box);
    #: other spaces, or False, send them through the pipe.
    shared_memory: bool = True
    #: (bool) copy observations out of shared memory; False returns views that the env's
    #: next step overwrites.
    copy_on_get: bool = True
    #: (int) envs hosted by one worker process (raise it for cheap envs: fewer, fuller messages).
    envs_per_worker: int = setting(1, "[1, inf)")
    #: (str) multiprocessing start method: 'forkserver' (safe with threads), 'spawn' or 'fork'.
    context: str = setting("forkserver", ("forkserver", "spawn", "fork"))
    #: (float) seconds a new worker may take to build its envs and report ready.
    connect_timeout: float = setting(60.0, "(0, inf]")
    #: (float) seconds the parent (waiting for a reply) and a worker (waiting for the next
    #: command) poll their pipe, yielding the CPU between polls, before they block in the
    #: kernel; 0 = always block. Off by itself while waits are longer or the core is
    #: contended (spin.py).
    spin_wait: float = setting(0.0005, "[0, inf)")


class WorkerPoolEnvManager(BaseEnvManager[ObsT, ActT]):
    """The worker processes of a subprocess env manager and their faults (see the module docstring)."""

    config_view = WorkerPoolConfig
    _cfg: WorkerPoolConfig

    def __init__(self, env_fn: List[Callable[[], BaseEnv[ObsT, ActT]]], cfg: Optional[Mapping[str, object]] = None) -> None:
        super().__init__(env_fn, cfg)
        c = self._cfg
        per = c.envs_per_worker
        ids = list(range(self._env_num))
        self._workers = [WorkerProcess(k, ids[s:s + per]) for k, s in enumerate(range(0, self._env_num, per))]
        self._where = [(w, slot) for w in self._workers for slot in range(len(w.env_ids))]
        self._layout: Optional[List[LayoutEntry]] = None
        self._copy = c.copy_on_get
        self._reset_spec: Dict[int, Any] = {}  # env_id -> seed for an in-worker auto-reset, or NO_RESET
        self._broken: Dict[int, str] = {}  # env_id -> why its episode is lost (co-hosted with a renewed worker)
        self._inflight: Set[int] = set()  # envs with a step in flight
        self._resetting: Dict[int, List[Any]] = {}  # env_id -> [seed, failed attempts]
        self._results: Dict[int, BaseEnvTimestep[Optional[ObsT]]] = {}  # step results not handed out yet
        self._sent_obs: Dict[int, ObsT] = {}  # the obs each env had when its action was sent
        self._calls: Dict[int, Tuple[Any, Optional[Failure]]] = {}  # env_id -> (value, failure) of a Seed / Call
        self._user_error: Optional[BaseException] = None
        self._in_order = True  # sync: wait for workers one after the other (async overrides)
        self._spin = SpinWait(c.spin_wait, own_processes=1 + len(self._workers))

    # ---- worker processes -------------------------------------------------------------------
    def _context(self) -> Any:
        global _preload_set
        ctx = mp.get_context(self._cfg.context)
        if self._cfg.context == "forkserver":
            os.environ[PARENT_ENV] = str(os.getpid())  # the fork server's race check (lifeline.py)
            if not _preload_set:
                ctx.set_forkserver_preload(_PRELOAD)
                _preload_set = True
        return ctx

    def _lifeline(self) -> Tuple[Optional[int], bool]:
        """``worker_main``'s ``parent``: whom a worker dies with (lifeline.py)."""
        if self._cfg.context == "forkserver":
            return (None, True)  # its parent, the fork server, which forks from its only thread
        return (os.getpid(), threading.current_thread() is threading.main_thread())

    def _start_workers(self, workers: List[WorkerProcess]) -> None:
        """Start processes for ``workers`` and wait until each has built its envs."""
        self._refuse_unguarded_main()
        ctx = self._context()
        for w in workers:
            self._spawn(ctx, w)
        self._await_ready(workers)

    def _refuse_unguarded_main(self) -> None:
        """Stop before a start method that runs the main script again would start the run again (main_guard.py)."""
        if self._cfg.context == "fork":
            return
        where = unguarded_main_line()
        if where is not None:
            raise StrideError(
                f"{where[0]}, line {where[1]}, starts env worker processes outside `if __name__ == \"__main__\":`, "
                f"and with env.manager.context='{self._cfg.context}' every worker runs the script again "
                f"(and would start the run again): put the code that starts the run under that guard")

    def _spawn(self, ctx: Any, w: WorkerProcess) -> None:
        """Start ``w``'s process and hand it its descriptors (shared-memory block, command and reply pipes)."""
        fns = cloudpickle.dumps([self._env_fn[i] for i in w.env_ids])
        seeds = [None if self._seed is None else self._seed + i for i in w.env_ids]
        parent, child = ctx.Pipe(duplex=True)
        w.block = ObsBlock(self._layout, len(w.env_ids)) if self._layout is not None else None
        w.proc = ctx.Process(target=worker_main, args=(child, fns, seeds, self._dynamic_seed, self._layout,
                                                       self._spin.spin_s, 1 + len(self._workers)),
                             kwargs=dict(env_ids=list(w.env_ids), finite=self._finite, parent=self._lifeline()),
                             daemon=True, name=f"stride-env-worker-{w.index}")
        w.proc.start()
        child.close()
        w.conn = parent
        cmd_in, w.fd_out = os.pipe()
        w.fd, reply_out = os.pipe()
        w.poller = make_poller(w.fd) if HAS_POLL else None
        w.pending.clear()
        try:  # the child's ends of the pipes (and its shared-memory block), in worker_main's order
            for fd in ([w.block.fd] if w.block is not None and w.block.fd is not None else []) + [cmd_in, reply_out]:
                send_handle(parent, fd, w.proc.pid)
        except OSError:  # the child is already gone: reported by _await_ready
            pass
        os.close(cmd_in)
        os.close(reply_out)
        if w.block is not None:
            w.block.release_fd()

    def _await_ready(self, workers: List[WorkerProcess]) -> None:
        """Wait for each worker's ``Ready`` (within ``connect_timeout`` in all); close and raise otherwise."""
        deadline = time.monotonic() + float(self._cfg.connect_timeout)
        for w in workers:
            error = None
            try:
                if not w.conn.poll(max(deadline - time.monotonic(), 0.0)):
                    error = f"did not report ready within connect_timeout={self._cfg.connect_timeout} s"
                else:
                    message = decode(w.conn.recv_bytes())
                    if isinstance(message, Ready):
                        w.pid = message.pid
                        self._warn_unguarded(message.forkserver_guarded)
                    else:
                        error = f"failed to build its envs: {cast(BuildFailed, message).error}"
            except (EOFError, OSError):
                error = f"died while building its envs (exit code {w.proc.exitcode})"
            if error is not None:
                self.close()
                raise RuntimeError(f"env worker {w.index} (envs {w.env_ids}) {error}")

    def _warn_unguarded(self, guarded: bool) -> None:
        """Once per process: say so when a fork server started elsewhere lacks Stride's guard."""
        global _unguarded_warned
        if guarded or self._cfg.context != "forkserver" or _unguarded_warned or not sys.platform.startswith("linux"):
            return
        _unguarded_warned = True
        logger.warning("the multiprocessing fork server was started before Stride's first env manager (by other "
                       "code, without Stride's preload): if this process is SIGKILLed while an env is stuck in a "
                       "step, the fork server and that worker outlive it; launch a Stride manager first, or set "
                       "env.manager.context='spawn'")

    def _stop_worker(self, w: WorkerProcess, grace: float) -> None:
        """End ``w``'s process (politely for ``grace`` seconds, then SIGKILL) and free its resources."""
        if w.proc is not None:
            if w.proc.pid is None:  # never started
                w.proc = None
        if w.proc is not None:
            if grace > 0 and w.proc.is_alive() and w.fd_out >= 0:
                try:
                    send_blob(w.fd_out, encode(Close()))
                except OSError:
                    pass
                w.proc.join(grace)
            if w.proc.is_alive():
                w.proc.kill()
            w.proc.join(5)
            if w.proc.exitcode is not None:
                w.proc.close()  # releases the sentinel descriptor
        if w.conn is not None:
            w.conn.close()
        for fd in (w.fd, w.fd_out):
            if fd >= 0:
                os.close(fd)
        if w.block is not None:
            w.block.close()
        w.proc = w.conn = w.poller = w.block = None
        w.fd = w.fd_out = -1
        w.pending.clear()

    def _renew_worker(self, w: WorkerProcess, reason: str, blame_head: bool = True) -> None:
        """Replace ``w``'s process; the steps it had not answered end as abnormal, a reset it was
        running when it died or overran (``blame_head``) counts as a failed attempt, resets it had
        not reached are sent again."""
        logger.warning("env worker %d (envs %s) %s; starting a new process", w.index, w.env_ids, reason)
        pending = list(w.pending)
        self._stop_worker(w, grace=0.0)
        self._start_workers([w])
        failed: List[Tuple[int, str]] = []
        to_reset: List[int] = []
        for k, cmd in enumerate(pending):
            if cmd.kind == "step":
                for env_id in cmd.env_ids:
                    self._inflight.discard(env_id)
                    if self._close_episode(env_id, abnormal_timestep(reason)):
                        to_reset.append(env_id)
            elif cmd.kind in ("reset", "autoreset"):
                ids = [env_id for env_id in cmd.env_ids if env_id in self._resetting]
                if k == 0 and blame_head:
                    failed.extend((env_id, reason) for env_id in ids)
                else:
                    to_reset.extend(ids)
            else:
                for env_id in cmd.env_ids:
                    self._calls[env_id] = (None, Crash(reason))
        for env_id in w.env_ids:  # envs waiting for an action lost their state with the process
            if env_id in self._ready_obs:
                self._broken.setdefault(env_id, f"co-hosted worker {reason}")
        self._after_failures(w, failed, to_reset, renew=False)

    def _close_episode(self, env_id: int, timestep: BaseEnvTimestep[Optional[ObsT]]) -> bool:
        """Record an episode's last timestep; True (with the next seed drawn) if the env must be reset."""
        self._results[env_id] = timestep
        self._ready_obs.pop(env_id, None)
        self._episode_count[env_id] += 1
        if not (self._auto_reset and self._episode_count[env_id] < self._episode_num):
            return False
        self._resetting[env_id] = [self._draw_episode_seed(env_id), 0]
        return True

    def _after_failures(self, w: WorkerProcess, failed: List[Tuple[int, str]], to_reset: List[int], renew: bool) -> None:
        """Count failed reset attempts (giving up after ``max_retry``), renew ``w`` if asked, send resets."""
        for env_id, error in failed:
            entry = self._resetting[env_id]
            entry[1] += 1
            first_line = (error or "").splitlines()[0] if error else error
            if entry[1] >= self._max_retry:
                self.close()
                raise RuntimeError(
                    f"env {env_id} failed to reset {self._max_retry} time(s) "
                    f"(retry_type='{self._cfg.retry_type}'); last error: {first_line}"
                )
            logger.warning("env %d reset failed (attempt %d/%d): %s", env_id, entry[1], self._max_retry, first_line)
        if failed:
            time.sleep(self._cfg.retry_waiting_time)
        if renew:
            self._renew_worker(w, "is renewed after an env failure (retry_type='renew')", blame_head=False)
        ids = [e for e, _ in failed] + to_reset
        if ids:
            self._send_resets(ids)

    # ---- lifecycle ----------------------------------------------------------------------------
    def launch(self, reset_param: Optional[Mapping[int, Mapping[str, object]]] = None) -> None:
        """Start the worker processes and reset every env."""
        if not self._closed:
            raise StrideError("env manager is already launched; call close() first")
        layout = obs_layout(self.observation_space) if self._cfg.shared_memory else None
        if self._cfg.shared_memory and layout is None:
            logger.warning("observation space %s cannot go through shared memory; using the pipe", self.observation_space)
        if layout is not None and not shm_available():
            logger.warning("no os.memfd_create on this platform; observations go through the pipe")
            layout = None
        self._layout = layout
        self._closed = False
        self._clear_runtime_state()
        try:
            self._start_workers(self._workers)
        except BaseException:
            self.close()
            raise
        self.reset(reset_param)

    def _clear_runtime_state(self) -> None:
        self._reset_spec.clear()
        self._broken.clear()
        self._inflight.clear()
        self._resetting.clear()
        self._results.clear()
        self._calls.clear()
        self._ready_obs.clear()
        self._user_error = None

    def close(self) -> None:
        """Stop every worker (close politely, SIGKILL after a second) and free all resources; idempotent."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        alive = [w for w in self._workers if w.proc is not None and w.fd_out >= 0]
        for w in alive:
            try:
                send_blob(w.fd_out, encode(Close()))
            except OSError:
                pass
        deadline = time.monotonic() + 1.0
        for w in alive:
            w.proc.join(max(deadline - time.monotonic(), 0.0))
        for w in self._workers:
            self._stop_worker(w, grace=0.0)
        self._clear_runtime_state()

    # ---- sending and receiving ----------------------------------------------------------------
    def _send(self, w: WorkerProcess, env_ids: List[int], command: Command, timeout: Optional[float] = None) -> None:
        """Queue ``command`` (about the envs ``env_ids``) on ``w``; its reply is matched in order (a
        worker runs commands in order)."""
        cmd = PendingCommand(_KINDS.get(type(command), "call"), env_ids, timeout)
        if not w.pending:
            cmd.started = time.monotonic()
        w.pending.append(cmd)
        try:
            send_blob(w.fd_out, encode(command))
        except OSError:  # the worker is dead; its sentinel reports it in _pump
            pass

    def _broadcast(self, make: Callable[[WorkerProcess], Command]) -> None:
        """Send ``make(w)`` to every worker ``w`` and wait for all replies."""
        for w in self._workers:
            self._send(w, w.env_ids, make(w))
        self._pump(lambda: all(not w.pending for w in self._workers))
        self._calls.clear()

    def _pump(self, until: Callable[[], bool], max_wait: Optional[float] = None) -> bool:
        """Receive replies (handling deaths and deadlines) until ``until()``; False on ``max_wait``."""
        end = None if max_wait is None else time.monotonic() + max_wait
        while not until():
            busy = [w for w in self._workers if w.pending]
            if not busy:
                return True
            now = time.monotonic()
            timeout = None if end is None else max(end - now, 0.0)
            expired = None
            for w in busy:
                head = w.pending[0]
                if head.timeout is not None and head.started is not None:
                    left = head.started + head.timeout - now
                    if left <= 0:
                        expired = w
                        break
                    timeout = left if timeout is None else min(timeout, left)
            if expired is not None:
                self._renew_worker(expired, self._overrun(expired.pending[0], now))
                self._raise_user_error()
                continue
            if self._spin.poll([w.poller for w in busy], float("inf") if timeout is None else timeout):
                for w in busy:
                    self._receive(w)
                self._raise_user_error()
                continue
            self._spin.blocking()
            if timeout is None and self._in_order:
                self._receive(busy[0], block=True)  # all replies are needed: a blocking read is cheapest
                self._spin.blocked()
                self._raise_user_error()
                continue
            ready = mp_wait([w.fd for w in busy] + [w.proc.sentinel for w in busy], timeout)
            self._spin.blocked()
            if not ready:
                if end is not None and time.monotonic() >= end:
                    return False
                continue
            for w in busy:
                if w.fd in ready or (w.proc is not None and w.proc.sentinel in ready):
                    self._receive(w)
            self._raise_user_error()
        return True

    def _receive(self, w: WorkerProcess, block: bool = False) -> None:
        """Handle every reply ``w`` has ready (waiting for the first one if ``block``), or its death."""
        while w.pending:
            if not block and not self._readable(w) and w.proc.is_alive():
                return
            block = False
            try:
                blob = recv_blob(w.fd)
            except (EOFError, OSError):
                self._renew_worker(w, f"died (exit code {w.proc.exitcode})")
                return
            cmd = w.pending.popleft()
            reply = decode_reply(blob)
            if type(reply) is StepReply and reply.in_place:  # the worker resets these envs now; it replies next
                ids = [cmd.env_ids[k] for k in reply.in_place]
                w.pending.appendleft(PendingCommand("autoreset", ids, self._deadline("reset_timeout", len(ids))))
            if w.pending:
                w.pending[0].started = time.monotonic()
            self._dispatch(w, cmd, reply)

    @staticmethod
    def _readable(w: WorkerProcess) -> bool:
        """Whether ``w`` has a reply (or EOF) waiting, without blocking."""
        return bool(w.poller.poll(0)) if w.poller is not None else bool(mp_wait([w.fd], 0))

    def _timeout(self, key: str) -> Optional[float]:
        """The configured ``step_timeout`` or ``reset_timeout`` (``key``)."""
        return self._cfg.step_timeout if key == "step_timeout" else self._cfg.reset_timeout

    def _deadline(self, key: str, n: int) -> Optional[float]:
        """Seconds a command may take: ``step_timeout`` / ``reset_timeout`` per env it covers (a
        worker runs its envs one after the other), None (no limit) when the key is None."""
        per = self._timeout(key)
        return None if per is None else float(per) * n

    def _overrun(self, cmd: PendingCommand, now: float) -> str:
        """Why a worker is replaced after ``cmd`` ran past its deadline, quoting the configured limit."""
        key = "step_timeout" if cmd.kind == "step" else "reset_timeout"
        n = len(cmd.env_ids)
        what = {"step": "step", "reset": "reset", "autoreset": "reset (after its episode ended)"}.get(cmd.kind, cmd.kind)
        per_env = f" per env, {n} envs" if n > 1 else ""
        return (f"did not finish a {what} of env(s) {list(cmd.env_ids)} within {key}={self._timeout(key):g} s{per_env} "
                f"(no reply after {now - (cmd.started or now):.1f} s)")

    def _raise_user_error(self) -> None:
        if self._user_error is not None:
            e, self._user_error = self._user_error, None
            raise e


    def _dispatch(self, w: WorkerProcess, cmd: PendingCommand, reply: Reply) -> None:
        """Apply ``w``'s ``reply`` to ``cmd`` (implemented by the stepping manager)."""
        raise NotImplementedError

    def _send_resets(self, env_ids: List[int]) -> None:
        """Send reset commands (one per worker) for envs already registered in ``_resetting``."""
        by_worker: Dict[int, List[int]] = {}
        for env_id in env_ids:
            by_worker.setdefault(self._where[env_id][0].index, []).append(env_id)
        for k, ids in by_worker.items():
            w = self._workers[k]
            command = Reset([self._where[i][1] for i in ids], [self._resetting[i][0] for i in ids],
                            [self._reset_param.get(i, {}) for i in ids])
            self._send(w, ids, command, timeout=self._deadline("reset_timeout", len(ids)))

