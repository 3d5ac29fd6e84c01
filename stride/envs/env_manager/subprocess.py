"""Subprocess env managers: ``SyncSubprocessEnvManager`` (``'subprocess'``) and
``AsyncSubprocessEnvManager`` (``'async_subprocess'``).

Same contract as :class:`BaseEnvManager` (they subclass it: seed streams, episode counting,
``state_dict`` and ``done`` are the base's), with the envs in worker processes. Better than the
peers on purpose:

* **Cheap envs are not drowned in IPC.** ``envs_per_worker`` hosts several envs per process and a
  manager call sends one pickled message per worker, not per env (DI-engine, Gymnasium and SB3 pay
  one round trip per env per step). Episode ends are reset inside the worker with a seed the
  parent drew in advance from its own stream, so auto-reset costs no extra round trip.
* **Observations through shared memory that cannot leak**: an anonymous ``memfd`` per worker,
  handed over the pipe (no ``/dev/shm`` name, so even a SIGKILLed parent leaves nothing behind).
* **Faults are survived, not fatal.** DI-engine closes the manager on a child exception and raises
  ``EOFError`` on a dead child (DI-engine#623); Gymnasium and SB3 have no per-env restart. Here an
  exception in ``step`` closes that episode with ``info['abnormal'] = True``; a dead child (pipe
  EOF or process sentinel) or one that overruns ``step_timeout``/``reset_timeout`` (deadlines kept
  by the parent with ``multiprocessing.connection.wait``, never SIGALRM) is killed and replaced
  and its in-flight episodes are closed as abnormal; resets are retried ``max_retry`` times in the
  same process (``retry_type='reset'``) or a new one (``'renew'``). A replacement env always starts
  a fresh episode with the next seed of the manager's stream, never stitched to the broken one.
  User errors (``StrideError``, e.g. an action outside the space) are re-raised with the child's
  message and not retried.
* **Safe start and shutdown**: ``forkserver`` workers (safe once torch threads exist), factories
  sent with cloudpickle, children ignore SIGINT and die with their parent; ``close()`` is
  idempotent and leaves no process, descriptor or shared-memory segment.

An env whose worker is replaced while the env waits for an action (the other envs of a worker
that hosts several, or a death noticed during ``random_action``/``seed``) has lost its state too:
its next step returns ``info['abnormal'] = True`` without reaching a worker, and it starts afresh.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import pickle
import time
from collections import deque
from multiprocessing.connection import wait as mp_wait
from typing import Any, Callable, Deque, Dict, List, Optional

import cloudpickle
import numpy as np

from ...utils.errors import ConfigError, StrideError
from ...utils.registry import ENV_MANAGER_REGISTRY
from ..base_env import BaseEnv, BaseEnvTimestep
from .base import BaseEnvManager
from .shm import ObsBlock, obs_layout, shm_available
from .worker import CRASH, NO_RESET, OK, USER, worker_main

logger = logging.getLogger(__name__)

_PROTO = pickle.HIGHEST_PROTOCOL
_PRELOAD = ["numpy", "gymnasium", "cloudpickle", "stride.envs.env_manager.worker"]
_preload_set = False
_MISSING = object()


class _WorkerDied(Exception):
    """Internal: a worker's pipe closed or its process ended."""


class _Cmd:
    """A command sent to a worker whose reply has not arrived yet."""

    __slots__ = ("kind", "env_ids", "timeout", "started")

    def __init__(self, kind: str, env_ids: List[int], timeout: Optional[float]) -> None:
        self.kind, self.env_ids, self.timeout = kind, env_ids, timeout
        self.started: Optional[float] = None  # when the worker began on it (it runs commands in order)


class _Worker:
    """One worker process, its pipe, its shared-memory block and its queue of pending commands."""

    __slots__ = ("index", "env_ids", "proc", "conn", "block", "pending", "pid")

    def __init__(self, index: int, env_ids: List[int]) -> None:
        self.index, self.env_ids = index, env_ids
        self.proc: Any = None
        self.conn: Any = None
        self.block: Optional[ObsBlock] = None
        self.pending: Deque[_Cmd] = deque()
        self.pid: Optional[int] = None


def _abnormal(reason: str) -> BaseEnvTimestep:
    return BaseEnvTimestep(None, 0.0, True, {"abnormal": True, "error": reason})


def _plain_action(a: Any) -> Any:
    """NumPy scalars become Python scalars: an order of magnitude cheaper to pickle."""
    return a.item() if isinstance(a, np.generic) else a


@ENV_MANAGER_REGISTRY.register("subprocess")
class SyncSubprocessEnvManager(BaseEnvManager):
    """Envs in worker processes; ``step`` returns a result for every env it was given."""

    @classmethod
    def default_config(cls) -> dict:
        cfg = super().default_config()
        cfg.update(
            # (bool) observations through shared memory (fixed-shape numeric Box / Dict of Box);
            # other spaces, or False, send them through the pipe.
            shared_memory=True,
            # (bool) copy observations out of shared memory; False returns views that the env's
            # next step overwrites.
            copy_on_get=True,
            # (int) envs hosted by one worker process (raise it for cheap envs: fewer, fuller messages).
            envs_per_worker=1,
            # (str) multiprocessing start method: 'forkserver' (safe with threads), 'spawn' or 'fork'.
            context="forkserver",
            # (float) seconds a new worker may take to build its envs and report ready.
            connect_timeout=60.0,
        )
        return cfg

    def __init__(self, env_fn: List[Callable[[], BaseEnv]], cfg: Optional[dict] = None) -> None:
        super().__init__(env_fn, cfg)
        c = self._cfg
        if c["context"] not in ("forkserver", "spawn", "fork"):
            raise ConfigError(f"unknown context '{c['context']}'; valid choices: fork, forkserver, spawn")
        per = int(c["envs_per_worker"])
        if per < 1:
            raise ConfigError(f"envs_per_worker must be >= 1, got {c['envs_per_worker']!r}")
        ids = list(range(self._env_num))
        self._workers = [_Worker(k, ids[s:s + per]) for k, s in enumerate(range(0, self._env_num, per))]
        self._where = [(w, slot) for w in self._workers for slot in range(len(w.env_ids))]
        self._layout: Optional[list] = None
        self._copy = bool(c["copy_on_get"])
        self._reset_spec: Dict[int, Any] = {}  # env_id -> seed for an in-worker auto-reset, or NO_RESET
        self._broken: Dict[int, str] = {}  # env_id -> why its episode is lost (co-hosted with a renewed worker)
        self._inflight: set = set()  # envs with a step in flight
        self._resetting: Dict[int, list] = {}  # env_id -> [seed, failed attempts]
        self._results: Dict[int, BaseEnvTimestep] = {}  # step results not handed out yet
        self._sent_obs: Dict[int, Any] = {}  # the obs each env had when its action was sent
        self._calls: Dict[int, Any] = {}  # replies to seed/call/replay commands
        self._user_error: Optional[BaseException] = None
        self._in_order = True  # sync: wait for workers one after the other (async overrides)
        # Episode ends are reset inside the step command unless only reset_timeout is set: then a
        # hung reset must be told apart from a step that may legitimately take any time.
        self._reset_in_place = not (c["step_timeout"] is None and c["reset_timeout"] is not None)

    # ---- worker processes -------------------------------------------------------------------
    def _context(self) -> Any:
        global _preload_set
        ctx = mp.get_context(self._cfg["context"])
        if self._cfg["context"] == "forkserver" and not _preload_set:
            ctx.set_forkserver_preload(_PRELOAD)  # workers start in ~10 ms instead of ~0.5 s
            _preload_set = True
        return ctx

    def _start_workers(self, workers: List[_Worker]) -> None:
        """Start processes for ``workers`` and wait until each has built its envs."""
        ctx = self._context()
        for w in workers:
            fns = cloudpickle.dumps([self._env_fn[i] for i in w.env_ids])
            seeds = [None if self._seed is None else self._seed + i for i in w.env_ids]
            parent, child = ctx.Pipe(duplex=True)
            w.block = ObsBlock(self._layout, len(w.env_ids)) if self._layout is not None else None
            w.proc = ctx.Process(target=worker_main, args=(child, fns, seeds, self._dynamic_seed, self._layout),
                                 daemon=True, name=f"stride-env-worker-{w.index}")
            w.proc.start()
            child.close()
            w.conn = parent
            w.pending.clear()
            if w.block is not None:
                from multiprocessing.reduction import send_handle

                try:
                    send_handle(parent, w.block.fd, w.proc.pid)
                except OSError:  # the child is already gone: reported just below
                    pass
                w.block.release_fd()
        deadline = time.monotonic() + float(self._cfg["connect_timeout"])
        for w in workers:
            error = None
            try:
                if not w.conn.poll(max(deadline - time.monotonic(), 0.0)):
                    error = f"did not report ready within connect_timeout={self._cfg['connect_timeout']} s"
                else:
                    kind, payload = pickle.loads(w.conn.recv_bytes())
                    if kind == "ready":
                        w.pid = payload
                    else:
                        error = f"failed to build its envs: {payload}"
            except (EOFError, OSError):
                error = f"died while building its envs (exit code {w.proc.exitcode})"
            if error is not None:
                self.close()
                raise RuntimeError(f"env worker {w.index} (envs {w.env_ids}) {error}")

    def _stop_worker(self, w: _Worker, grace: float) -> None:
        """End ``w``'s process (politely for ``grace`` seconds, then SIGKILL) and free its resources."""
        if w.proc is not None:
            if w.proc._popen is None:  # never started
                w.proc = None
        if w.proc is not None:
            if grace > 0 and w.proc.is_alive() and w.conn is not None:
                try:
                    w.conn.send_bytes(pickle.dumps(("close",), _PROTO))
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
        if w.block is not None:
            w.block.close()
        w.proc = w.conn = w.block = None
        w.pending.clear()

    def _renew_worker(self, w: _Worker, reason: str) -> None:
        """Replace ``w``'s process; everything it was doing ends as abnormal or as a failed attempt."""
        logger.warning("env worker %d (envs %s) %s; starting a new process", w.index, w.env_ids, reason)
        pending = list(w.pending)
        self._stop_worker(w, grace=0.0)
        self._start_workers([w])
        failed, to_reset = [], []
        for cmd in pending:
            if cmd.kind == "step":
                for env_id in cmd.env_ids:
                    self._inflight.discard(env_id)
                    if self._close_episode(env_id, _abnormal(reason)):
                        to_reset.append(env_id)
            elif cmd.kind == "reset":
                failed.extend((env_id, reason) for env_id in cmd.env_ids if env_id in self._resetting)
            else:
                for env_id in cmd.env_ids:
                    self._calls[env_id] = (CRASH, reason)
        for env_id in w.env_ids:  # envs waiting for an action lost their state with the process
            if env_id in self._ready_obs:
                self._broken.setdefault(env_id, f"co-hosted worker {reason}")
        self._after_failures(w, failed, to_reset, renew=False)

    def _close_episode(self, env_id: int, timestep: BaseEnvTimestep) -> bool:
        """Record an episode's last timestep; True (with the next seed drawn) if the env must be reset."""
        self._results[env_id] = timestep
        self._ready_obs.pop(env_id, None)
        self._episode_count[env_id] += 1
        if not (self._auto_reset and self._episode_count[env_id] < self._episode_num):
            return False
        self._resetting[env_id] = [self._draw_episode_seed(env_id), 0]
        return True

    def _after_failures(self, w: _Worker, failed: list, to_reset: List[int], renew: bool) -> None:
        """Count failed reset attempts (giving up after ``max_retry``), renew ``w`` if asked, send resets."""
        for env_id, error in failed:
            entry = self._resetting[env_id]
            entry[1] += 1
            first_line = (error or "").splitlines()[0] if error else error
            if entry[1] >= self._max_retry:
                self.close()
                raise RuntimeError(
                    f"env {env_id} failed to reset {self._max_retry} time(s) "
                    f"(retry_type='{self._cfg['retry_type']}'); last error: {first_line}"
                )
            logger.warning("env %d reset failed (attempt %d/%d): %s", env_id, entry[1], self._max_retry, first_line)
        if failed:
            time.sleep(self._cfg["retry_waiting_time"])
        if renew:
            self._renew_worker(w, "is renewed after an env failure (retry_type='renew')")
        ids = [e for e, _ in failed] + to_reset
        if ids:
            self._send_resets(ids)

    # ---- lifecycle ----------------------------------------------------------------------------
    def launch(self, reset_param: Optional[Dict[int, dict]] = None) -> None:
        """Start the worker processes and reset every env."""
        if not self._closed:
            raise StrideError("env manager is already launched; call close() first")
        layout = obs_layout(self.observation_space) if self._cfg["shared_memory"] else None
        if self._cfg["shared_memory"] and layout is None:
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
        alive = [w for w in self._workers if w.proc is not None and w.conn is not None]
        for w in alive:
            try:
                w.conn.send_bytes(pickle.dumps(("close",), _PROTO))
            except OSError:
                pass
        deadline = time.monotonic() + 1.0
        for w in alive:
            w.proc.join(max(deadline - time.monotonic(), 0.0))
        for w in self._workers:
            self._stop_worker(w, grace=0.0)
        self._clear_runtime_state()

    def _restart_seed_streams(self) -> None:
        super()._restart_seed_streams()
        self._reset_spec.clear()
        if not self._closed and self._seed is not None:
            self._broadcast("seed", lambda w: ([self._seed + i for i in w.env_ids], self._dynamic_seed))

    def _draw_episode_seed(self, env_id: int) -> Optional[int]:
        self._reset_spec.pop(env_id, None)
        return super()._draw_episode_seed(env_id)

    def _peek_reset_spec(self, env_id: int) -> Any:
        """The seed the worker should use if this env's episode ends now (NO_RESET: don't reset)."""
        if not self._auto_reset or self._episode_count[env_id] + 1 >= self._episode_num:
            return NO_RESET
        return self._peek_episode_seed(env_id)

    # ---- sending and receiving ----------------------------------------------------------------
    def _send(self, w: _Worker, kind: str, env_ids: List[int], payload: tuple, timeout: Optional[float] = None) -> None:
        """Queue a command on ``w``; its reply is matched in order (a worker runs commands in order)."""
        cmd = _Cmd(kind, env_ids, timeout)
        if not w.pending:
            cmd.started = time.monotonic()
        w.pending.append(cmd)
        try:
            w.conn.send_bytes(pickle.dumps((kind,) + payload, _PROTO))
        except OSError:  # the worker is dead; its sentinel reports it in _pump
            pass

    def _broadcast(self, kind: str, make: Callable[[_Worker], tuple]) -> None:
        """Send ``kind`` to every worker and wait for all replies."""
        for w in self._workers:
            self._send(w, kind, w.env_ids, (list(range(len(w.env_ids))),) + make(w))
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
                if head.timeout is not None:
                    left = head.started + head.timeout - now
                    if left <= 0:
                        expired = w
                        break
                    timeout = left if timeout is None else min(timeout, left)
            if expired is not None:
                self._renew_worker(expired, f"exceeded its {expired.pending[0].kind} timeout of {expired.pending[0].timeout} s")
                self._raise_user_error()
                continue
            if timeout is None and self._in_order:
                self._receive(busy[0], block=True)  # all replies are needed: a blocking read is cheapest
                self._raise_user_error()
                continue
            ready = mp_wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout)
            if not ready:
                if end is not None and time.monotonic() >= end:
                    return False
                continue
            for w in busy:
                if w.conn in ready or (w.proc is not None and w.proc.sentinel in ready):
                    self._receive(w)
            self._raise_user_error()
        return True

    def _receive(self, w: _Worker, block: bool = False) -> None:
        """Handle every reply ``w`` has ready (waiting for the first one if ``block``), or its death."""
        while w.pending:
            if not block and not w.conn.poll() and w.proc.is_alive():
                return
            block = False
            try:
                blob = w.conn.recv_bytes()
            except (EOFError, OSError):
                self._renew_worker(w, f"died (exit code {w.proc.exitcode})")
                return
            cmd = w.pending.popleft()
            if w.pending:
                w.pending[0].started = time.monotonic()
            self._dispatch(w, cmd, pickle.loads(blob)[1])

    def _raise_user_error(self) -> None:
        if self._user_error is not None:
            e, self._user_error = self._user_error, None
            raise e

    def _dispatch(self, w: _Worker, cmd: _Cmd, results: list) -> None:
        """Apply one reply; failures are handled after the whole reply (a renewal swaps the block)."""
        failed: list = []  # (env_id, error): failed reset attempts
        to_reset: List[int] = []  # envs whose next episode still needs a reset command
        crashed = False
        block, copy = w.block, self._copy
        if cmd.kind == "step":
            inflight, ready, where = self._inflight, self._ready_obs, self._where
            for env_id, res in zip(cmd.env_ids, results):
                inflight.discard(env_id)
                status = res[0]
                if status == OK:
                    obs = res[4]
                    if not res[2]:
                        if block is not None:
                            obs = block.read(where[env_id][1], copy)
                        ready[env_id] = obs
                        self._results[env_id] = BaseEnvTimestep(obs, res[1], False, res[3])
                    elif self._close_episode(env_id, BaseEnvTimestep(obs, res[1], True, res[3])):
                        outcome = res[5]
                        if outcome == "":  # reset in place with the seed just drawn
                            self._episode_seed[env_id] = self._resetting.pop(env_id)[0]
                            self._episode_actions[env_id] = []
                            ready[env_id] = res[6] if block is None else block.read(where[env_id][1], copy)
                        elif outcome is None:
                            to_reset.append(env_id)
                        else:
                            failed.append((env_id, outcome))
                elif status == CRASH:
                    logger.warning("env %d step failed: %s; its episode is closed as abnormal", env_id, res[1].splitlines()[0])
                    crashed = True
                    if self._close_episode(env_id, _abnormal(res[1])):
                        to_reset.append(env_id)
                else:  # the env refused the action: it is still where it was, waiting for a valid one
                    self._episode_actions[env_id].pop()
                    ready[env_id] = self._sent_obs.get(env_id)
                    self._user_error = self._user_error or pickle.loads(res[1])
        elif cmd.kind in ("reset", "replay"):
            for env_id, res in zip(cmd.env_ids, results):
                if cmd.kind == "reset" and env_id not in self._resetting:
                    continue  # superseded (the manager was reset or reloaded meanwhile)
                if res[0] == OK:
                    if cmd.kind == "reset":
                        self._episode_seed[env_id] = self._resetting.pop(env_id)[0]
                        self._episode_actions[env_id] = []
                    self._ready_obs[env_id] = res[1] if block is None else block.read(self._where[env_id][1], copy)
                    self._broken.pop(env_id, None)
                elif res[0] == USER:
                    self._resetting.pop(env_id, None)
                    self._user_error = self._user_error or pickle.loads(res[1])
                elif cmd.kind == "reset":
                    failed.append((env_id, res[1]))
                else:
                    self._user_error = self._user_error or RuntimeError(f"env {env_id} failed to replay its episode: {res[1]}")
        else:
            for env_id, res in zip(cmd.env_ids, results):
                self._calls[env_id] = res
        if failed or to_reset:
            renew = self._cfg["retry_type"] == "renew" and (crashed or bool(failed))
            self._after_failures(w, failed, to_reset, renew)

    def _send_resets(self, env_ids: List[int]) -> None:
        """Send reset commands (one per worker) for envs already registered in ``_resetting``."""
        by_worker: Dict[int, List[int]] = {}
        for env_id in env_ids:
            by_worker.setdefault(self._where[env_id][0].index, []).append(env_id)
        for k, ids in by_worker.items():
            w = self._workers[k]
            payload = ([self._where[i][1] for i in ids], [self._resetting[i][0] for i in ids],
                       [self._reset_param.get(i, {}) for i in ids])
            self._send(w, "reset", ids, payload, timeout=self._cfg["reset_timeout"])

    # ---- the contract --------------------------------------------------------------------------
    def reset(self, reset_param: Optional[Dict[int, dict]] = None) -> None:
        """Reset all envs (or those in ``reset_param``, whose kwargs are kept for later resets)."""
        self._check_open()
        self._drain()
        if reset_param is not None:
            self._reset_param.update(reset_param)
            ids = list(reset_param)
        else:
            ids = list(range(self._env_num))
            self._episode_count = [0] * self._env_num
            self._reset_spec.clear()
            if not self._dynamic_seed:
                self._restart_seed_streams()
        for i in ids:
            self._ready_obs.pop(i, None)
            self._results.pop(i, None)
            self._broken.pop(i, None)
            self._resetting[i] = [self._draw_episode_seed(i), 0]
        self._send_resets(ids)
        self._pump(lambda: not any(i in self._resetting for i in ids))
        self._order_ready()

    def _drain(self) -> None:
        """Wait for every command in flight (their results stay queued for the next ``step``)."""
        self._pump(lambda: not any(w.pending for w in self._workers))

    def _send_steps(self, actions: Dict[int, Any]) -> None:
        ready, where, spec_cache, recorded = self._ready_obs, self._where, self._reset_spec, self._episode_actions
        sent_obs = self._sent_obs
        for env_id in actions:
            if env_id not in ready:
                raise StrideError(f"env {env_id} is not ready (ready envs: {sorted(ready)})")
        batches: Dict[int, tuple] = {}
        broken: List[int] = []
        for env_id, action in actions.items():
            recorded[env_id].append(action)
            if env_id in self._broken:  # its worker was replaced: the episode cannot go on
                if self._close_episode(env_id, _abnormal(self._broken.pop(env_id))):
                    broken.append(env_id)
                continue
            w, slot = where[env_id]
            spec = spec_cache.get(env_id, _MISSING)
            if spec is _MISSING:
                spec = spec_cache[env_id] = self._peek_reset_spec(env_id) if self._reset_in_place else NO_RESET
            b = batches.get(w.index)
            if b is None:
                b = batches[w.index] = ([], [], [], [])
            b[0].append(env_id)
            b[1].append(slot)
            b[2].append(_plain_action(action))
            b[3].append(spec)
            self._inflight.add(env_id)
            sent_obs[env_id] = ready.pop(env_id)
        timeout = self._cfg["step_timeout"]
        if timeout is not None and self._cfg["reset_timeout"] is not None:
            timeout = timeout + self._cfg["reset_timeout"]  # a step may include the in-place reset
        for k, (ids, slots, acts, specs) in batches.items():
            self._send(self._workers[k], "step", ids, (slots, acts, specs), timeout=timeout)
        if broken:
            self._send_resets(broken)

    def _order_ready(self) -> None:
        """Keep ``ready_obs`` in env-id order whatever the history (as the base manager does), so a
        resumed run batches envs exactly as an uninterrupted one."""
        ready = self._ready_obs
        keys = list(ready)
        if any(a > b for a, b in zip(keys, keys[1:])):
            items = sorted(ready.items())
            ready.clear()
            ready.update(items)

    def _take(self, env_ids: Any) -> Dict[int, BaseEnvTimestep]:
        results = self._results
        return {i: results.pop(i) for i in env_ids if i in results}

    def step(self, actions: Dict[int, Any]) -> Dict[int, BaseEnvTimestep]:
        """Step the given envs and wait for all of them; finished ones are reset and reappear in ``ready_obs``."""
        self._check_open()
        self._send_steps(actions)
        ids = list(actions)
        inflight, resetting = self._inflight, self._resetting
        self._pump(lambda: not any(i in inflight or i in resetting for i in ids))
        self._order_ready()
        return self._take(ids)

    def seed(self, seed: Optional[int], dynamic_seed: bool = True) -> None:
        """Give env ``i`` its own stream of episode seeds derived from ``(seed, i)``."""
        if not self._closed:
            self._drain()
        super().seed(seed, dynamic_seed)

    def random_action(self) -> Dict[int, Any]:
        """A random action for every ready env (drawn by the env in its worker; asked again once
        if the worker died meanwhile and was replaced)."""
        out: Dict[int, Any] = {}
        todo = list(self._ready_obs)
        for attempt in range(2):
            self._calls.clear()
            by_worker: Dict[int, List[int]] = {}
            for i in todo:
                by_worker.setdefault(self._where[i][0].index, []).append(i)
            for k, env_ids in by_worker.items():
                self._send(self._workers[k], "call", env_ids, ([self._where[i][1] for i in env_ids], "random_action", ()))
            self._pump(lambda: all(i in self._calls for i in todo))
            failed = []
            for i in todo:
                status, value = self._calls.pop(i)
                if status == OK:
                    out[i] = value
                elif attempt == 0:
                    failed.append(i)
                else:
                    raise RuntimeError(f"env {i} failed to draw a random action: {value}")
            todo = failed
            if not todo:
                break
        return {i: out[i] for i in self._ready_obs if i in out}

    def state_dict(self) -> dict:
        """As :meth:`BaseEnvManager.state_dict`, after the steps in flight have come back."""
        self._check_open()
        self._drain()
        return super().state_dict()

    def load_state_dict(self, state: dict) -> None:
        """Restore seed streams and replay each in-flight episode in its worker."""
        self._check_open()
        self._drain()
        self._results.clear()
        self._load_seed_state(state)
        self._episode_count = list(state["episode_count"])
        self._reset_spec.clear()
        self._broken.clear()
        self._ready_obs.clear()
        for w in self._workers:
            eps = [state["episodes"][i] for i in w.env_ids]
            actions = [[np.asarray(a) if isinstance(a, list) else a for a in ep["actions"]] for ep in eps]
            payload = (list(range(len(w.env_ids))), [ep["seed"] for ep in eps],
                       [self._reset_param.get(i, {}) for i in w.env_ids], actions)
            self._send(w, "replay", list(w.env_ids), payload)
        self._drain()
        self._raise_user_error()
        for i, ep in enumerate(state["episodes"]):
            self._episode_seed[i] = ep["seed"]
            self._episode_actions[i] = list(ep["actions"])
        self._order_ready()

    @property
    def done(self) -> bool:
        """True once every env has run ``episode_num`` episodes and every result was handed out."""
        return BaseEnvManager.done.fget(self) and not self._results and not self._inflight

    @property
    def worker_pids(self) -> List[Optional[int]]:
        """The process id hosting each env (for tests and monitoring)."""
        return [w.pid for w, _ in self._where]


@ENV_MANAGER_REGISTRY.register("async_subprocess")
class AsyncSubprocessEnvManager(SyncSubprocessEnvManager):
    """Envs in worker processes; ``step`` returns whichever envs are ready.

    Each result is returned exactly once: results of envs stepped in an earlier call, still in
    flight then, come back in a later call. ``ready_obs`` holds the envs waiting for an action
    (waiting until there is at least one while others are in flight).
    """

    @classmethod
    def default_config(cls) -> dict:
        cfg = super().default_config()
        cfg.update(
            # (int) step returns once at least this many results are ready (or none are in flight).
            wait_num=1,
            # (float|None) once one result is ready, wait at most this long for wait_num of them.
            step_wait_timeout=None,
        )
        return cfg

    def __init__(self, env_fn: List[Callable[[], BaseEnv]], cfg: Optional[dict] = None) -> None:
        super().__init__(env_fn, cfg)
        self._in_order = False
        if int(self._cfg["wait_num"]) < 1:
            raise ConfigError(f"wait_num must be >= 1, got {self._cfg['wait_num']!r}")

    @property
    def ready_obs(self) -> Dict[int, Any]:
        """``{env_id: obs}`` of the envs waiting for an action (not in flight)."""
        if not self._closed and not self._ready_obs and (self._inflight or self._resetting):
            self._pump(lambda: bool(self._ready_obs))
        return self._ready_obs

    @property
    def ready_obs_id(self) -> List[int]:
        return list(self.ready_obs)

    def step(self, actions: Dict[int, Any]) -> Dict[int, BaseEnvTimestep]:
        """Send the given envs' actions; return the results that are ready (at least ``wait_num``).

        Results already back (e.g. gathered while ``ready_obs`` waited) are taken before the new
        actions go out, so an env's result is never overwritten by its next one.
        """
        self._check_open()
        results, inflight, resetting = self._results, self._inflight, self._resetting
        out = self._take([i for i in results if i not in resetting])
        self._send_steps(actions)
        wait_num = self._cfg["wait_num"]

        def complete() -> int:
            return len(out) + sum(1 for i in results if i not in resetting and i not in out)

        def enough() -> bool:
            return complete() >= wait_num or not (inflight or resetting)

        wait_s = self._cfg["step_wait_timeout"]
        if wait_s is None:
            self._pump(enough)
        else:
            self._pump(lambda: complete() > 0 or not (inflight or resetting))
            self._pump(enough, max_wait=wait_s)
        for w in self._workers:  # replies that are already there cost nothing to take
            if w.pending and w.conn.poll():
                self._receive(w)
        self._raise_user_error()
        for i in [i for i in results if i not in resetting and i not in out]:
            out[i] = results.pop(i)
        self._order_ready()
        return out
