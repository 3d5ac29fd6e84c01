"""The coordinator of ``-m parallel``: the driver's loop over collector, replay and learner actors.

The coordinator (the driver) keeps one collect in flight per collector and one train call in
flight on the learner, and neither waits for the other. When a collector's batch returns it
forwards the samples' object reference to the replay (the data never passes through the driver)
and sends that collector its next collect with the current weights; when the learner's call
returns it publishes the learner's collect-mode ``state_dict`` once (that one object in Ray's
object store is what every collector loads: the broadcast) and sends the next call, on batches the
replay sampled (again by reference) while the previous call trained. The replay ratio
(``system_config.replay_ratio``, by default the serial config's ``update_per_collect`` per
``n_sample`` env steps) is held by counting (:mod:`.ratio`): the learner is sent steps only when
the env steps allow them, and a collector is sent its next collect only when the collectors are
not more than ``replay_tolerance`` env steps ahead; so a parallel run does the serial config's
work per env step, only overlapped. Nothing in the loop names an algorithm.

On-policy policies (``policy.on_policy``: PPO, A2C) get no replay, as in the serial pipeline (the
seeds' "remove buffer"): a collector's whole unroll (its ``n_sample`` collect, tagged with the
version of the weights it acted with) goes straight to the learner, which trains on it in one
``train`` call (PPO's epochs inside) unless it is more than ``system_config.max_staleness``
versions old -- then it is dropped and counted (``result['stale_dropped']``) -- and only then is
that collector sent its next collect, with the weights just made. IMPALA is off-policy here
(v-trace corrects the lag) and takes the replay path.

The coordinator's parts, one concept each: the actors' lifecycle (start, restart, incarnations,
CPU, stop) is :mod:`.actors`; the learner's train calls, the weights they publish, the on-policy
route and learner replicas (``system_config.learner_num``) are :mod:`.training`; the counts are
:mod:`.counters`; the replay ratio :mod:`.ratio`. This module is the loop that ties them: routing,
holding, stopping, resuming.

Faults: a collector actor that dies (SIGKILL, OOM) is replaced by a new one (incarnation + 1,
fresh envs and seeds) and the batch it had in flight is reported lost; the replay actor restarts
from its last snapshot (Ray re-runs its constructor, which loads the snapshot, and retries the
calls it missed; the batches and items taken after the snapshot are counted lost: gaps in the
ledger, one stderr line, ``result.json``); Ctrl-C / SIGTERM saves a
learner checkpoint and stops every actor; a SIGKILLed driver takes the local instance with it (the
watchdog of :mod:`.cluster`), and on a joined cluster its actors, which it owns, die with it.

DI-engine's parallel entry runs its own Flask coordinator over pickled files and, as its users
report, hangs or loses collectors; RLlib restarts env runners but drops their samples silently and
takes 10-17 s to its first training step. Here the serial workers run unchanged in the actors,
every batch is tagged, and every loss is counted and logged.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Tuple, Type

from ...config import Config
from ...policy.base_policy import Policy
from ...utils.errors import ConfigError
from ...utils.log import build_logger
from ...utils.narrow import as_int, as_mapping
from ...worker import BaseSerialEvaluator
from ...worker.learner.learner import read_checkpoint
from ..run import Run
from .actors import JoinedRoles, RunActors
from .actors import latest_checkpoint as latest_checkpoint  # the league imports it from here
from .counters import Counters
from .ratio import compile_ratio
from .roles import CollectorRole, LearnerRole
from .tags import BatchTag
from .training import Training, replica_divergence

#: seconds the coordinator waits for a collector before it looks at signals again
POLL_SECONDS = 0.5


class CoordinatorHook:
    """What a run adds to the generic loop of :class:`Coordinator` without a field of it: the
    self-play league (:class:`~.league.LeagueHook`) is one. This base adds nothing (a plain
    ``-m parallel`` run); an extension overrides what it needs, and the coordinator calls it at
    these points only:

    - :attr:`collector_role` / :attr:`learner_role`: the role classes the actors are made of (a
      subclass of the generic role that adds what the extension's collectors or learner hold);
    - :meth:`collect_args`: extra arguments of a collector's next ``collect`` (top-level, so a Ray
      object reference among them arrives as its value);
    - :meth:`on_batch`: each batch's meta, before its collector's next collect is sent;
    - :meth:`on_restart`: a collector was replaced by a new incarnation (fresh from its config).

    What the extension keeps across a resume it registers with the run itself
    (:meth:`~stride.entry.run.Run.register_state`), as the coordinator does its counters. Unlike
    RLlib's callbacks (``on_sample_end`` and the like, called inside its env runners), a hook runs
    in the driver, between the actors' calls, so its state is one object and never races them."""

    collector_role: Type[CollectorRole] = CollectorRole
    learner_role: Type[LearnerRole] = LearnerRole

    def collect_args(self, name: str) -> Tuple[object, ...]:
        """Arguments that collector ``name``'s next ``collect`` takes after the generic ones."""
        return ()

    def on_batch(self, meta: Mapping[str, object]) -> None:
        """A collector's batch arrived (``meta``: what its ``collect`` returned beside the samples)."""

    def on_restart(self, name: str) -> None:
        """Collector ``name`` died and a new incarnation replaced it."""


class Coordinator:
    """The driver's loop: starts the actors, routes batches and weights, restarts dead collectors.

    Built on a connected Ray (local or joined) for a :class:`~stride.entry.run.Run` (its folder
    open); ``close()`` stops every actor it started or was handed (``roles``: a learner and
    collectors that joined, see :data:`JoinedRoles`). The run's checkpoint components (this
    coordinator's counters among them, :meth:`state_dict`) go into the learner actor's checkpoints
    (:meth:`save_checkpoint`). A resumed run (``run.resume_ckpt``) goes on from its checkpoint: the
    learner loads it (weights, optimiser, counters), the replay actor its snapshot, the run's
    components their states (:meth:`begin`); the collectors start as new incarnations with the
    learner's weights. :meth:`next_batch` is one turn of the loop and :meth:`summary` its end, so
    a run with its own evaluation (the league's, :mod:`.league`) drives the same coordinator; a
    ``hook`` (:class:`CoordinatorHook`) extends the loop where it needs to."""

    def __init__(self, cfg: Config, sys_cfg: Config, run: Run, roles: Optional[JoinedRoles] = None,
                 hook: Optional[CoordinatorHook] = None) -> None:
        if run.learner_hooks:
            raise ConfigError(f"learner hooks ({', '.join(type(h).__name__ for h in run.learner_hooks)}) run in a "
                              "local learner; -m parallel's learner is a Ray actor: valid choices: RunCallback "
                              "objects (on_train sees every train call), or -m serial with the hooks")
        self.cfg, self.sys, self.core = cfg, sys_cfg, run
        self.hook = CoordinatorHook() if hook is None else hook
        self.ratio = compile_ratio(cfg, sys_cfg)  # a bad replay_ratio stops the run before any actor starts
        self._resume_ckpt = run.resume_ckpt
        resumed = read_checkpoint(run.resume_ckpt) if run.resume_ckpt is not None else {}
        self._resumed = {str(name): as_mapping(state, f"checkpoint 'components.{name}'") for name, state in
                         as_mapping(resumed.get("components", {}), "checkpoint 'components'").items()}
        self._log = build_logger(cfg.exp_name, "coordinator")
        self.fresh = bool(cfg.policy.on_policy)  # on-policy: no replay; each unroll to the learner (:meth:`Training.fresh_unroll`)
        self.counters = Counters(self._log, run.tb, fresh=self.fresh)
        self.actors = RunActors(cfg, sys_cfg, (self.hook.collector_role, self.hook.learner_role), self.fresh,
                                self._resume_ckpt, roles, self._log)
        # the actors by role (``collectors`` is the actors' own dict: a restart shows here at once)
        self.replay, self.learners, self.learner = self.actors.replay, self.actors.learners, self.actors.learner
        self.collectors = self.actors.collectors
        self.in_flight: Dict[Any, Tuple[str, Any]] = {}  # meta ref -> (collector name, samples ref)
        self.envstep = as_int(resumed["envstep"], "checkpoint 'envstep'") if resumed else 0
        # the first weights: the learner's latest collect-mode state_dict (None: the initial ones); on-policy,
        # the first unrolls too come from the learner's weights (their log-probs are its)
        self.training = Training(cfg, sys_cfg, self.actors, self.ratio, self.counters, self.fresh,
                                 as_int(resumed["train_iter"], "checkpoint 'train_iter'") if resumed else 0,
                                 self.learner.collect_state.remote() if self.fresh or resumed else None)
        self.held: List[str] = []  # collectors the replay ratio holds back (their next collect not sent yet)
        self._held_since: Dict[str, float] = {}
        self._pushes: List[Tuple[BatchTag, Any]] = []  # replay pushes not recorded yet, in arrival order
        self._newcomers = None if roles is None else roles.newcomers
        self.joined: List[Dict[str, object]] = []  # -m dist: collectors taken in after the start
        self.left: List[Dict[str, object]] = []  # -m dist: collectors that died (not replaced)
        run.register_state("coordinator", self)

    @property
    def train_iter(self) -> int:
        """The learner's iteration as the run has seen it (its last train call's)."""
        return self.training.train_iter

    @property
    def last_log(self) -> Dict[str, float]:
        """The learner's latest written log (plain numbers)."""
        return self.training.last_log

    def begin(self) -> None:
        """The loop starts: a resumed run's components (registered with the run by now: these
        counters, the evaluator, the clocks, a league) load the checkpoint's states, and the run starts
        (its folder kept, the callbacks' ``on_run_start``)."""
        if self._resumed:
            self.core.load_components(self._resumed)
        self.core.start()

    def _hold(self) -> None:
        """The run's components' states to the learner, for its next checkpoints."""
        for name, state in self.core.components_state().items():
            self.learner.hold.remote(name, state)

    def state_dict(self) -> Dict[str, object]:
        """The run's env steps and counters (batches, staleness, losses, restarts): a resumed run goes on from them."""
        return {"envstep": self.envstep, **self.counters.state_dict()}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        """Go on from saved counters (:meth:`state_dict`)."""
        self.counters.load_state_dict(state)
        self.envstep = max(self.envstep, as_int(state["envstep"], "coordinator state 'envstep'"))

    def _dispatch(self, name: str) -> None:
        actor = self.collectors[name][0]
        meta, data = actor.collect.options(num_returns=2).remote(self.training.weights, self.train_iter, self.envstep,
                                                                 self.train_iter, *self.hook.collect_args(name))
        self.in_flight[meta] = (name, data)

    def _restart(self, name: str, error: BaseException) -> None:
        """Collector ``name`` died: replaced by its next incarnation (:meth:`RunActors.restart`), said
        in the log and one stderr line."""
        msg = self.actors.restart(name, error, self.counters, self.envstep, self.train_iter)
        self.hook.on_restart(name)
        self._log.warning(msg)
        print(f"stride: {msg}", file=sys.stderr, flush=True)

    def _take_in(self) -> None:
        """``-m dist``: the collectors that joined since the last turn start collecting."""
        if self._newcomers is None:
            return
        for actor, name, index in self._newcomers(set(self.collectors)):
            self.actors.take_in(actor, name, index)
            self.joined.append({"collector": name, "envstep": self.envstep, "train_iter": self.train_iter})
            msg = f"[coordinator] {name} joined at env step {self.envstep}; {len(self.collectors)} collector(s) now"
            self._log.info(msg)
            print(f"stride: {msg}", flush=True)
            self._send(name)

    def _leave(self, name: str, error: BaseException) -> None:
        """``-m dist``: joined collector ``name`` died (its process stopped or was killed): its batch
        in flight is counted lost and the run goes on without it (it is not replaced: where
        collectors run is the user's to say)."""
        import ray

        actor, _, incarnation = self.collectors.pop(name)
        ray.kill(actor)
        self.counters.lost_batches += 1
        self.left.append({"collector": name, "incarnation": incarnation, "lost_batches": 1, "envstep": self.envstep,
                          "train_iter": self.train_iter})
        msg = (f"[coordinator] {name} left ({type(error).__name__}); 1 batch in flight lost; "
               f"{len(self.collectors)} collector(s) go on")
        self._log.warning(msg)
        print(f"stride: {msg}", file=sys.stderr, flush=True)

    def _send(self, name: str) -> None:
        """``name``'s next collect, unless the replay ratio holds it back (it waits in :attr:`held`)."""
        if not self.fresh and self.training.learning() and not self.ratio.may_collect(len(self.in_flight)):
            self.held.append(name)
            self._held_since[name] = time.perf_counter()
            return
        self._dispatch(name)

    def _release(self) -> None:
        """Held collectors sent their collects while the ratio allows; when neither side could move
        otherwise (no collect out and no train call, the learner starved or waiting) one goes anyway."""
        stuck = not self.in_flight and not self.training.calls
        while self.held and (stuck or not self.training.learning() or self.ratio.may_collect(len(self.in_flight))):
            if stuck and self.training.learning() and not self.ratio.may_collect(0):
                self.ratio.forced += 1
            stuck = False
            name = self.held.pop(0)
            self.counters.clocks["collector_wait_seconds"] += time.perf_counter() - self._held_since.pop(name)
            self._dispatch(name)

    def _route(self, tag: BatchTag, data: Any) -> None:
        """Where a batch goes: its samples' reference to the replay (recorded when stored)."""
        self._pushes.append((tag, self.replay.push.remote(data, self.envstep, tag)))

    def _record_pushes(self, wait: bool) -> None:
        """Record the replay's verdicts on the batches routed so far, in their order (``wait``:
        all of them; otherwise those stored already)."""
        import ray

        refs = [ref for _, ref in self._pushes]
        done = len(refs)
        if refs and not wait:
            ready = set(ray.wait(refs, num_returns=len(refs), timeout=0)[0])
            done = next((k for k, ref in enumerate(refs) if ref not in ready), len(refs))
        if done:
            for (tag, _), push in zip(self._pushes[:done], ray.get(refs[:done])):
                self.counters.record(tag, push, self.train_iter, self.envstep)
            del self._pushes[:done]

    def settle(self) -> None:
        """The run's end: the train call in flight and every push recorded, so the counters are final."""
        if self.training.calls:
            self.training.trained()
        self._record_pushes(wait=True)
        self.counters.settle()

    def overlap(self) -> Dict[str, object]:
        """The replay ratio and where the time went after the warm-up (:meth:`Counters.overlap`); an
        on-policy run has no replay ratio (each unroll is trained on once)."""
        return self.counters.overlap(self.envstep, {} if self.fresh else self.ratio.summary())

    def start(self) -> None:
        """The replay ratio's counters from the run's env steps and gradient steps (a resumed run's
        too), then one collect in flight per collector."""
        self.ratio.restore(self.envstep, self.train_iter)
        for name in self.collectors:
            self._send(name)

    def next_batch(self, max_train_iter: Optional[int]) -> Optional[Mapping[str, object]]:
        """One turn: wait (at most :data:`POLL_SECONDS`) for a collector's batch, meanwhile taking
        the learner's finished train calls and sending the next; route the batch (:meth:`_route`),
        send that collector its next collect (or hold it, :class:`~.ratio.ReplayRatio`) and return
        the batch's meta (None: none came in time, or its collector had died and was replaced)."""
        import ray
        from ray.exceptions import RayActorError

        training = self.training
        training.max_train_iter = max_train_iter
        self._record_pushes(wait=False)
        self._take_in()
        deadline = time.monotonic() + POLL_SECONDS
        while True:
            training.learn(self.envstep)
            self._release()
            waiting = list(self.in_flight) + training.calls[:1]
            if not waiting:
                if not self.collectors:  # -m dist: every collector left; wait for one to join
                    time.sleep(max(0.0, deadline - time.monotonic()))
                return None
            ready, _ = ray.wait(waiting, num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                return None
            if training.calls and ready[0] == training.calls[0]:
                training.trained()
                continue
            name, data = self.in_flight.pop(ready[0])
            try:
                meta: Dict[str, object] = ray.get(ready[0])
            except RayActorError as e:
                if self._newcomers is not None:  # -m dist: a joined collector that dies has left
                    self._leave(name, e)
                    return None
                self._restart(name, e)
                self._send(name)
                return None
            self.actors.delivered[name] = self.actors.delivered.get(name, 0) + 1
            steps = as_int(meta["envstep"], "a batch's envstep")
            self.envstep += steps
            self.ratio.received(steps)
            self.counters.received(self.envstep, self.ratio.learn_start)
            training.starved = False
            tag = meta["tag"]
            assert isinstance(tag, BatchTag)  # what CollectorRole.collect returns
            if self.fresh:  # on-policy: no replay; trained on (or dropped) before its collector goes on
                self.hook.on_batch(meta)
                training.fresh_unroll(tag, data, self.envstep)
                self._dispatch(name)  # with the weights just made
                return meta
            self._route(tag, data)
            self.hook.on_batch(meta)
            self._send(name)
            training.learn(self.envstep)  # the learner starts on the new env steps at once
            return meta

    def save_checkpoint(self, name: Optional[str] = None) -> Optional[str]:
        """The learner's checkpoint now (rank 0), with the run's env steps and the registered
        components; its path."""
        import ray

        self._hold()
        path: Optional[str] = ray.get(self.learner.save_checkpoint.remote(name, self.envstep))
        return path

    def run(self, evaluator: BaseSerialEvaluator, policy: Policy) -> Dict[str, object]:
        """Collect, store, learn and evaluate until the stop value, a limit, a signal or a callback
        (register ``evaluator`` and ``run.record`` with the run first: a resumed run's go on). The
        run's clocks count the actors' CPU as training."""
        import ray

        run, record = self.core, self.core.record
        train_limit = math.inf if run.max_train_iter is None else run.max_train_iter
        env_limit = math.inf if run.max_env_step is None else run.max_env_step
        self.begin()
        bar = run.bar(env_limit, initial=self.envstep)
        stop = False
        self.start()
        with run.signals():
            while True:
                if run.stop_requested:
                    record.clock.add_cpu(self.actor_cpu())
                    run.halt(self.save_checkpoint)
                    break
                if evaluator.should_eval(self.train_iter, self.envstep):
                    policy.eval_mode.load_state_dict(ray.get(self.learner.eval_state.remote()))
                    record.clock.add_cpu(self.actor_cpu())
                    stop = run.evaluate(evaluator, self, self.envstep, extra=self.columns())
                    bar.update(self.envstep, self.train_iter, record.last_return)
                    if stop:
                        break
                    if run.signalled():  # a signal cut the evaluation short: the loop's top saves and stops
                        continue
                iter_before = self.train_iter
                if self.next_batch(run.max_train_iter) is None:
                    continue
                run.collected(self.envstep, self.train_iter)
                if self.train_iter != iter_before:
                    run.trained(self.train_iter, self.last_log)
                bar.update(self.envstep, self.train_iter, record.last_return)
                if self.envstep >= env_limit or self.train_iter >= train_limit:
                    break
        bar.close()
        record.clock.add_cpu(self.actor_cpu())
        summary = self.summary(policy)  # the final checkpoint: the clock's state as it ends
        return {"stop": bool(stop), **run.outcome(), "env_step": self.envstep, "train_iter": self.train_iter,
                **record.summary(), "exp_dir": run.exp, **summary}

    def columns(self) -> Dict[str, object]:
        """A parallel run's columns of ``progress.csv``, after the serial ones (:meth:`Counters.columns`)."""
        return self.counters.columns(self.fresh)

    def actor_cpu(self) -> float:
        """CPU-seconds the actors spent since the last call (:meth:`RunActors.cpu_seconds`), which
        the run's clock counts as training."""
        return self.actors.cpu_seconds()

    def summary(self, policy: Policy) -> Dict[str, object]:
        """The end of a run: the replay's snapshot (a resumed run starts from it), the learners'
        ``after_run`` (the final checkpoint, with the registered components), rank 0's learn state
        loaded into ``policy``, and the run's counters (a resumed run's included)."""
        import ray

        self.settle()
        exp = self.cfg.exp_name
        # the ledger's holder: the replay, or an on-policy run's learner (it has no replay)
        replay = ray.get((self.learner if self.replay is None else self.replay).summary.remote())
        if self.replay is not None:
            ray.get(self.replay.snapshot.remote())
        states = ray.get([learner.learn_state.remote() for learner in self.learners])
        self._hold()
        ray.get([learner.finish.remote(self.envstep) for learner in self.learners])
        policy.learn_mode.load_state_dict(states[0])
        return {"final_checkpoint": os.path.join(exp, "ckpt", f"iteration_{self.train_iter}.pth.tar"),
                **self.counters.summary(replay), "learners": len(self.learners),
                "replica_max_weight_diff": replica_divergence(states), "stale_dropped": self.counters.stale_dropped,
                **({} if self._newcomers is None else {"collectors_joined": self.joined, "collectors_left": self.left}),
                **self.overlap()}

    def close(self) -> None:
        """Close every collector's envs, then end every actor this coordinator started or was handed."""
        self.actors.close()
