"""``SyncSubprocessEnvManager`` (``'subprocess'``): the env-manager contract over worker processes.

Same contract as :class:`BaseEnvManager` (a subclass: seed streams, episode counting,
``state_dict`` and ``done`` are the base's), with the envs in worker processes run by
:class:`~.pool.WorkerPoolEnvManager` (processes, faults, waiting; see ``pool.py``).
``AsyncSubprocessEnvManager`` (``async_subprocess.py``) changes only how ``step`` waits. Better
than the peers on purpose:

* **Cheap envs are not drowned in IPC.** ``envs_per_worker`` hosts several envs per process and a
  manager call sends one pickled message per worker, not per env (DI-engine, Gymnasium and SB3 pay
  one round trip per env per step). Episode ends are reset inside the worker with a seed the
  parent drew in advance from its own stream, so auto-reset costs no extra command (the worker
  answers the step, then resets and answers again: each reset is timed against ``reset_timeout``,
  each step against ``step_timeout``).
* **Observations through shared memory that cannot leak**: an anonymous ``memfd`` per worker,
  handed over the pipe (no ``/dev/shm`` name, so even a SIGKILLed parent leaves nothing behind).
  A reply that covers all of a worker's envs costs one copy of its block, not one per env.
* **No wake-up per message on a free core.** Parent and workers poll their pipe for up to
  ``spin_wait`` before blocking (``spin.py``): a cheap env's reply beats the ~20-60 us it takes
  the kernel to wake a blocked process, which the peers pay twice per env per step. Polling turns
  itself off for slow envs and backs off on a contended core, where blocking wins.
* **Faults are survived, not fatal** (DI-engine closes the manager on a child exception and raises
  ``EOFError`` on a dead child, DI-engine#623; Gymnasium and SB3 have no per-env restart): an
  exception in ``step`` closes that episode with ``info['abnormal'] = True``; dead and hung
  workers are replaced (``pool.py``). A replacement env always starts a fresh episode with the
  next seed of the manager's stream, never stitched to the broken one. User errors
  (``StrideError``, e.g. an action outside the space) are re-raised with the child's message and
  not retried.

An env whose worker is replaced while the env waits for an action (the other envs of a worker
that hosts several, or a death noticed during ``random_action``/``seed``) has lost its state too:
its next step returns ``info['abnormal'] = True`` without reaching a worker, and it starts afresh.
"""

from __future__ import annotations

import logging
from typing import Any, Dict, List, Mapping, Optional, Tuple, cast

import numpy as np

from ...utils.errors import StrideError
from ...utils.registry import ENV_MANAGER_REGISTRY
from ..base_env import ActT, BaseEnvTimestep, ObsT
from .checks import nonfinite_message
from .pool import PendingCommand, WorkerPoolEnvManager, WorkerProcess, abnormal_timestep
from .protocol import (NO_RESET, Call, CallReply, Crash, Failure, NonFinite, Replay, Reply, ResetReply, Seed, Step,
                       StepReply, UserError)

logger = logging.getLogger(__name__)

_MISSING = object()


_new_tuple = tuple.__new__  # builds a BaseEnvTimestep or a Step at half the cost of their Python-level __new__


@ENV_MANAGER_REGISTRY.register("subprocess")
class SyncSubprocessEnvManager(WorkerPoolEnvManager[ObsT, ActT]):
    """Envs in worker processes; ``step`` returns a result for every env it was given."""

    def _restart_seed_streams(self) -> None:
        super()._restart_seed_streams()
        self._reset_spec.clear()
        if not self._closed and self._seed is not None:
            seed, dynamic = self._seed, self._dynamic_seed
            self._broadcast(lambda w: Seed(list(range(len(w.env_ids))), [seed + i for i in w.env_ids], dynamic))

    def _draw_episode_seed(self, env_id: int) -> Optional[int]:
        self._reset_spec.pop(env_id, None)
        return super()._draw_episode_seed(env_id)

    def _peek_reset_spec(self, env_id: int) -> Any:
        """The seed the worker should use if this env's episode ends now (NO_RESET: don't reset)."""
        if not self._auto_reset or self._episode_count[env_id] + 1 >= self._episode_num:
            return NO_RESET
        return self._peek_episode_seed(env_id)

    def _dispatch(self, w: WorkerProcess, cmd: PendingCommand, reply: Reply) -> None:
        """Apply one reply; failures are handled after the whole reply (a renewal swaps the block)."""
        failed: List[Tuple[int, str]] = []  # failed reset attempts: (env_id, error)
        to_reset: List[int] = []  # envs whose next episode still needs a reset command
        crashed = False
        if cmd.kind == "step":
            crashed = self._apply_steps(w, cmd, cast(StepReply, reply), to_reset)
        elif cmd.kind == "replay":
            self._apply_replays(w, cmd, cast(ResetReply, reply))
        elif cmd.kind in ("reset", "autoreset"):
            self._apply_resets(w, cmd, cast(ResetReply, reply), failed)
        else:
            call = cast(CallReply, reply)
            for k, env_id in enumerate(cmd.env_ids):
                self._calls[env_id] = (call.values[k], call.failures.get(k))
        if failed or to_reset:
            renew = self._cfg.retry_type == "renew" and (crashed or bool(failed))
            self._after_failures(w, failed, to_reset, renew)

    def _apply_steps(self, w: WorkerProcess, cmd: PendingCommand, reply: StepReply, to_reset: List[int]) -> bool:
        """Hand out the step results and update ``ready_obs``; True if an env crashed or returned a
        non-finite value (a renewal under ``retry_type='renew'``)."""
        inflight, ready, results_out, where = self._inflight, self._ready_obs, self._results, self._where
        block, copy, failures = w.block, self._copy, reply.failures
        # one copy of the worker's whole block when the reply covers it, then a view per env
        batch = block.read_all(copy) if block is not None and len(cmd.env_ids) == block.n else None
        # envs the worker resets in place (their "autoreset" reply is next in line): no reset command
        in_place = w.pending[0].env_ids if w.pending and w.pending[0].kind == "autoreset" else ()
        crashed = False
        # (ignores, not casts, below: no calls on the step path) what came back is what the worker's
        # BaseEnv[ObsT, ActT] returned, pickled or in its shared-memory slot; a reward is None
        # only at a position ``failures`` names
        for k, (env_id, reward, done, info, obs) in enumerate(
                zip(cmd.env_ids, reply.rewards, reply.dones, reply.infos, reply.obs)):
            inflight.discard(env_id)
            if failures and k in failures:
                crashed = self._apply_step_failure(env_id, failures[k], to_reset) or crashed
            elif not done:
                if batch is not None:
                    obs = batch[where[env_id][1]]
                elif block is not None:
                    obs = block.read(where[env_id][1], copy)
                ready[env_id] = obs  # type: ignore[assignment]
                results_out[env_id] = _new_tuple(BaseEnvTimestep, (obs, reward, False, info))
            elif (self._close_episode(env_id, BaseEnvTimestep(obs, reward, True, info))  # type: ignore[arg-type]
                  and env_id not in in_place):
                to_reset.append(env_id)  # the seed just drawn is the one the worker was given
        return crashed

    def _apply_step_failure(self, env_id: int, failure: Failure, to_reset: List[int]) -> bool:
        """A failed step: a crash or a non-finite value closes the episode as abnormal (True; under
        ``nonfinite='raise'`` the error is raised once the reply is applied); a user error leaves the
        env where it was, waiting for a valid action, and is raised (False)."""
        if isinstance(failure, UserError):
            self._episode_actions[env_id].pop()
            self._ready_obs[env_id] = self._sent_obs[env_id]  # recorded when its action was sent
            self._user_error = self._user_error or failure.error()
            return False
        if isinstance(failure, Crash):
            logger.warning("env %d step failed: %s; its episode is closed as abnormal", env_id, failure.text.splitlines()[0])
            reason = failure.text
        else:
            step = len(self._episode_actions[env_id])
            error = self._nonfinite_error(env_id, failure.env_label, failure.what, step)
            reason = nonfinite_message(env_id, failure.env_label, failure.what, step, advice=False)
            if error is None:
                self._log_dropped(reason)
            else:
                self._user_error = self._user_error or error
        if self._close_episode(env_id, abnormal_timestep(reason)):
            to_reset.append(env_id)
        return True

    def _apply_resets(self, w: WorkerProcess, cmd: PendingCommand, reply: ResetReply,
                      failed: List[Tuple[int, str]]) -> None:
        """First observations of new episodes (a reset command's reply or in-place resets after a step)."""
        for k, env_id in enumerate(cmd.env_ids):
            if env_id not in self._resetting:
                continue  # superseded (the manager was reset or reloaded meanwhile)
            failure = reply.failures.get(k)
            if failure is not None:
                self._reset_failed(env_id, failure, failed)
                continue
            self._episode_seed[env_id] = self._resetting.pop(env_id)[0]
            self._episode_actions[env_id] = []
            self._ready_obs[env_id] = self._first_obs(w, env_id, reply.obs[k])
            self._broken.pop(env_id, None)

    def _apply_replays(self, w: WorkerProcess, cmd: PendingCommand, reply: ResetReply) -> None:
        """Observations of replayed episodes (``load_state_dict``); any failure is raised."""
        for k, env_id in enumerate(cmd.env_ids):
            failure = reply.failures.get(k)
            if failure is None:
                self._ready_obs[env_id] = self._first_obs(w, env_id, reply.obs[k])
                self._broken.pop(env_id, None)
            elif isinstance(failure, UserError):
                self._user_error = self._user_error or failure.error()
            else:
                self._user_error = self._user_error or RuntimeError(
                    f"env {env_id} failed to replay its episode: {failure.describe()}")

    def _first_obs(self, w: WorkerProcess, env_id: int, sent: object) -> ObsT:
        """An env's observation after a reset: in the message, or in its shared-memory slot (what
        the worker's BaseEnv[ObsT, ActT] returned)."""
        return cast(ObsT, sent if w.block is None else w.block.read(self._where[env_id][1], self._copy))

    def _reset_failed(self, env_id: int, failure: Failure, failed: List[Tuple[int, str]]) -> None:
        """A failed reset: a user error is raised once the reply is applied; a crash, or a
        non-finite observation under ``nonfinite='drop'``, is a failed attempt (retried); ``'raise'`` raises."""
        if isinstance(failure, NonFinite):
            error: Optional[BaseException] = self._nonfinite_error(env_id, failure.env_label, failure.what, None)
            if error is None:
                failed.append((env_id, nonfinite_message(env_id, failure.env_label, failure.what, None, advice=False)))
                return
        elif isinstance(failure, UserError):
            error = failure.error()
        else:
            failed.append((env_id, failure.text or "reset failed"))
            return
        self._resetting.pop(env_id, None)
        self._user_error = self._user_error or error

    # ---- the contract --------------------------------------------------------------------------
    def reset(self, reset_param: Optional[Mapping[int, Mapping[str, object]]] = None) -> None:
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

    def _send_steps(self, actions: Mapping[int, ActT]) -> None:
        """Queue one step command per worker: its envs' slots, actions and in-place reset seeds.

        Per env this is a handful of dict/list operations (one tuple per env, split per worker by
        ``zip``); the reset seed is cached per env until drawn, and broken envs are looked up only
        when a renewal left some.
        """
        ready = self._ready_obs
        if not actions.keys() <= ready.keys():  # refuse before sending anything
            env_id = next(i for i in actions if i not in ready)
            raise StrideError(f"env {env_id} is not ready (ready envs: {sorted(ready)})")
        where, spec_cache, recorded = self._where, self._reset_spec, self._episode_actions
        sent_obs, inflight, broken_now = self._sent_obs, self._inflight, self._broken
        batches: Dict[WorkerProcess, List[Tuple[int, int, object, Optional[int]]]] = {}
        broken: List[int] = []
        generic = np.generic
        for env_id, action in actions.items():
            recorded[env_id].append(action)
            if broken_now and env_id in broken_now:  # its worker was replaced: the episode cannot go on
                if self._close_episode(env_id, abnormal_timestep(broken_now.pop(env_id))):
                    broken.append(env_id)
                continue
            w, slot = where[env_id]
            spec = spec_cache.get(env_id, _MISSING)
            if spec is _MISSING:
                spec = spec_cache[env_id] = self._peek_reset_spec(env_id)
            if isinstance(action, generic):  # NumPy scalars pickle an order of magnitude slower
                action = action.item()
            b = batches.get(w)
            if b is None:
                b = batches[w] = []
            b.append((env_id, slot, action, spec))
            inflight.add(env_id)
            sent_obs[env_id] = ready.pop(env_id)
        for w, b in batches.items():
            ids, slots, acts, specs = zip(*b)
            step = _new_tuple(Step, (slots, acts, specs))
            self._send(w, list(ids), step, timeout=self._deadline("step_timeout", len(ids)))
        if broken:
            self._send_resets(broken)

    def _order_ready(self) -> None:
        """Keep ``ready_obs`` in env-id order whatever the history (as the base manager does), so a
        resumed run batches envs exactly as an uninterrupted one."""
        ready = self._ready_obs
        keys = list(ready)
        if keys != sorted(keys):
            items = sorted(ready.items())
            ready.clear()
            ready.update(items)

    def _take(self, env_ids: List[int]) -> Dict[int, BaseEnvTimestep[Optional[ObsT]]]:
        results = self._results
        return {i: results.pop(i) for i in env_ids if i in results}

    def step(self, actions: Mapping[int, ActT]) -> Dict[int, BaseEnvTimestep[Optional[ObsT]]]:
        """Step the given envs and wait for all of them; finished ones are reset and reappear in ``ready_obs``."""
        self._check_open()
        self._send_steps(actions)
        ids = list(actions)
        inflight, resetting = self._inflight, self._resetting
        # nothing in flight at all is the usual way this ends: checked first, no per-env scan
        self._pump(lambda: not (inflight or resetting) or not any(i in inflight or i in resetting for i in ids))
        self._order_ready()
        return self._take(ids)

    def seed(self, seed: Optional[int], dynamic_seed: bool = True) -> None:
        """Give env ``i`` its own stream of episode seeds derived from ``(seed, i)``."""
        if not self._closed:
            self._drain()
        super().seed(seed, dynamic_seed)

    def random_action(self) -> Dict[int, ActT]:
        """A random action for every ready env (drawn by the env in its worker; asked again once
        if the worker died meanwhile and was replaced)."""
        out: Dict[int, ActT] = {}
        todo = list(self._ready_obs)
        for attempt in range(2):
            self._calls.clear()
            by_worker: Dict[int, List[int]] = {}
            for i in todo:
                by_worker.setdefault(self._where[i][0].index, []).append(i)
            for k, env_ids in by_worker.items():
                self._send(self._workers[k], env_ids, Call([self._where[i][1] for i in env_ids], "random_action", ()))
            self._pump(lambda: all(i in self._calls for i in todo))
            failed = []
            for i in todo:
                value, failure = self._calls.pop(i)
                if failure is None:
                    out[i] = value
                elif attempt == 0:
                    failed.append(i)
                else:
                    raise RuntimeError(f"env {i} failed to draw a random action: {failure.describe()}")
            todo = failed
            if not todo:
                break
        return {i: out[i] for i in self._ready_obs if i in out}

    def state_dict(self) -> Dict[str, object]:
        """As :meth:`BaseEnvManager.state_dict`, after the steps in flight have come back."""
        self._check_open()
        self._drain()
        return super().state_dict()

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        """Restore seed streams and replay each in-flight episode in its worker."""
        self._check_open()
        self._drain()
        self._results.clear()
        self._load_seed_state(state)
        counts, episodes = self._episodes_state(state)
        self._episode_count = counts
        self._reset_spec.clear()
        self._broken.clear()
        self._ready_obs.clear()
        for w in self._workers:
            eps = [episodes[i] for i in w.env_ids]
            actions = [[np.asarray(a) if isinstance(a, list) else a for a in acts] for _, acts in eps]
            replay = Replay(list(range(len(w.env_ids))), [seed for seed, _ in eps],
                            [self._reset_param.get(i, {}) for i in w.env_ids], actions)
            self._send(w, list(w.env_ids), replay)
        self._drain()
        self._raise_user_error()
        for i, (seed, acts) in enumerate(episodes):
            self._episode_seed[i] = seed
            self._episode_actions[i] = list(acts)
        self._order_ready()

    @property
    def done(self) -> bool:
        """True once every env has run ``episode_num`` episodes and every result was handed out."""
        return super().done and not self._results and not self._inflight

    @property
    def worker_pids(self) -> List[Optional[int]]:
        """The process id hosting each env (for tests and monitoring)."""
        return [w.pid for w, _ in self._where]

