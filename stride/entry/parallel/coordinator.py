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

Learner replicas (``system_config.learner_num = N > 1``): N learner actors, pinned to one node,
form one torch.distributed group (gloo; rank 0 listens on 127.0.0.1 at a port found free on that
node) with ``policy.learn.multi_gpu=True``. The replay draws each batch of ``batch_size`` once and
cuts it in N equal parts, part ``i`` going straight to replica ``i``; the replicas average their
gradients, so one update of N replicas is the update one learner takes on the whole batch (not
N batches per step: that would change the algorithm's batch size with N). The coordinator calls
``train`` on every replica with the same number of batches, so they always meet in the same
collectives; rank 0 alone is asked for weights, eval weights and checkpoints, and writes logs.
Stopping (stop value, limits, Ctrl-C) happens between train calls, so no replica is ever left
waiting in a collective. A replica that dies stops the run with one line naming it and the
checkpoint folder: a process-group member cannot rejoin a running group (torch.distributed would
need every rank to re-rendezvous, and the dead one's optimizer state is gone), so the honest
answer is a clean stop and a restart from the last checkpoint. ``learner_num=1`` makes no group.
On purpose unlike the peers: RLlib sizes batches per learner (``train_batch_size_per_learner``), so
adding learners changes the algorithm; DI-engine's replicas need its launcher and a hard-coded port
(10314). Here the pipeline places the replicas, finds the port, keeps the algorithm's batch, and
checks at the end that the replicas are still identical (``result['replica_max_weight_diff']``).

Faults: a collector actor that dies (SIGKILL, OOM) is replaced by a new one (incarnation + 1,
fresh envs and seeds) and the batch it had in flight is reported lost; the replay actor restarts
from its last snapshot (Ray re-runs its constructor, which loads the snapshot, and retries the
calls it missed; batches taken after the snapshot are counted as gaps); Ctrl-C / SIGTERM saves a
learner checkpoint and stops every actor; a SIGKILLed driver takes the local instance with it (the
watchdog of :mod:`.cluster`), and on a joined cluster its actors, which it owns, die with it.

DI-engine's parallel entry runs its own Flask coordinator over pickled files and, as its users
report, hangs or loses collectors; RLlib restarts env runners but drops their samples silently and
takes 10-17 s to its first training step. Here the serial workers run unchanged in the actors,
every batch is tagged, and every loss is counted and logged.
"""

from __future__ import annotations

import copy
import math
import os
import re
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Type

import torch

from ...config import Config
from ...policy.base_policy import Policy
from ...torch_utils.dist import DEFAULT_ADDR, free_port
from ...utils.errors import ConfigError, StrideError
from ...utils.log import build_logger
from ...utils.narrow import as_int, as_mapping
from ...worker import BaseSerialEvaluator
from ...worker.learner.learner import read_checkpoint
from ..run import Run
from ..utils import resolve_resume
from .counters import Counters
from .ratio import compile_ratio
from .roles import CollectorRole, LearnerRole, ReplayRole, Replica
from .system import cpus_needed
from .tags import BatchTag

#: seconds the coordinator waits for a collector before it looks at signals again
POLL_SECONDS = 0.5


#: seconds the coordinator waits for the other replicas' errors after one replica failed
FAILURE_GRACE_S = 10.0


def _reason(error: BaseException) -> str:
    """An actor error in a few words: its class and the cause's own first line (no traceback, no colours)."""
    cause = getattr(error, "cause", None)  # RayTaskError: the exception raised in the actor
    text = str(cause if isinstance(cause, BaseException) else error)
    first = re.sub(r"\x1b\[[0-9;]*m", "", text).strip().splitlines()[:1]
    what = type(cause).__name__ if isinstance(cause, BaseException) else type(error).__name__
    return f"{what}: {' '.join(first[0].split())[:200]}" if first else what


def latest_checkpoint(exp_dir: str) -> str:
    """Where the run can be picked up: its latest checkpoint, or that there is none yet."""
    try:
        return f"its latest checkpoint: {resolve_resume(exp_dir)[1]}"
    except ConfigError:
        return f"no checkpoint was written yet (in {os.path.join(exp_dir, 'ckpt')})"


def replica_rendezvous() -> Tuple[str, str, int]:
    """Run on the node of learner rank 0: (that node's Ray id, 127.0.0.1, a port free there)."""
    import ray

    return ray.get_runtime_context().get_node_id(), DEFAULT_ADDR, free_port(DEFAULT_ADDR)


#: a learner and collectors that joined from other processes (``-m dist``):
#: ``(learner handle, [(collector handle, name, index), ...])``
JoinedRoles = Tuple[Any, List[Tuple[Any, str, int]]]


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
        self.fresh = bool(cfg.policy.on_policy)  # on-policy: no replay; each unroll to the learner (:meth:`_learn_fresh`)
        self.counters = Counters(self._log, run.tb, fresh=self.fresh)
        self._start_roles(roles)
        self.delivered: Dict[str, int] = {}  # batches of each collector's current incarnation
        self.in_flight: Dict[Any, Tuple[str, Any]] = {}  # meta ref -> (collector name, samples ref)
        self.envstep = as_int(resumed["envstep"], "checkpoint 'envstep'") if resumed else 0
        self.train_iter = as_int(resumed["train_iter"], "checkpoint 'train_iter'") if resumed else 0
        # ref of the learner's latest collect-mode state_dict (None: the initial weights); on-policy,
        # the first unrolls too come from the learner's weights (their log-probs are its)
        self.weights: Any = self.learner.collect_state.remote() if self.fresh or resumed else None
        self.last_log: Dict[str, Any] = {}
        self.held: List[str] = []  # collectors the replay ratio holds back (their next collect not sent yet)
        self._held_since: Dict[str, float] = {}
        self._training: List[Any] = []  # the train call in flight: one result ref per replica ([]: none)
        self._asked = 0  # gradient steps that call was asked for
        self._prefetched: Optional[List[Any]] = None  # the next call's batches, drawn while a call trains
        self._starved = False  # the last call took fewer steps than asked (the replay had too few items)
        self._pushes: List[Tuple[BatchTag, Any]] = []  # replay pushes not recorded yet, in arrival order
        self._max_train_iter: Optional[int] = None
        self._cpu_seen: Dict[str, float] = {}  # each actor's CPU-seconds at the last actor_cpu()
        run.register_state("coordinator", self)

    def _start_roles(self, roles: Optional[JoinedRoles]) -> None:
        """The replay actor (none on-policy), then the learners and collectors: started here, or
        (``roles``, ``-m dist``) the ones that joined; a resumed run's collectors are new
        incarnations of the ones the replay's ledger saw last."""
        import ray

        resources: Dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]  # (untyped in Ray 2.60)
        available = float(resources.get("CPU", 0.0))
        if cpus_needed(self.sys) > available:
            raise ConfigError(f"system_config asks for {cpus_needed(self.sys):g} CPUs (collector_num x collector_cpus "
                              f"+ learner_num x learner_cpus + replay_cpus) but the Ray cluster has {available:g}: lower them")
        # actor handles are typed Any: Ray's stubs type their methods as the plain ones, without .remote
        self._collector_cls: Any = ray.remote(self.hook.collector_role)
        snapshot = os.path.join(self.cfg.exp_name, "replay_snapshot.pth.tar")
        self.replay: Any = None if self.fresh else ray.remote(ReplayRole).options(
            num_cpus=self.sys.replay_cpus, max_restarts=-1, max_task_retries=-1).remote(
            self.cfg, snapshot, self.sys.replay_snapshot_freq)
        self.collectors: Dict[str, Tuple[Any, int, int]] = {}  # name -> (actor, index, incarnation)
        if roles is None:
            self.learners: List[Any] = self._new_learners()
            seen = self._replay_incarnations() if self._resume_ckpt is not None else {}
            for i in range(self.sys.collector_num):
                name = f"collector{i}"
                first = seen.get(name, -1) + 1
                self.collectors[name] = (self._new_collector(name, i, first), i, first)
        else:  # -m dist: the learner and collectors that joined
            self.learners = [roles[0]]
            self.collectors = {name: (actor, index, 0) for actor, name, index in roles[1]}
        self.learner: Any = self.learners[0]  # rank 0: weights, eval weights, checkpoints, logs

    def _replay_incarnations(self) -> Dict[str, int]:
        import ray

        if self.replay is None:  # on-policy: the learner's ledger starts anew with the resumed run
            return {}
        seen: Dict[str, int] = ray.get(self.replay.incarnations.remote())
        return seen

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

    def _new_learners(self) -> List[Any]:
        """One learner actor, or ``learner_num`` replicas on one node (see the module docstring)."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        learner_cls = ray.remote(self.hook.learner_role)
        cpus, n = self.sys.learner_cpus, int(self.sys.learner_num)
        if n == 1:
            return [learner_cls.options(num_cpus=cpus).remote(self.cfg, self._resume_ckpt)]
        node, addr, port = ray.get(ray.remote(replica_rendezvous).options(num_cpus=0).remote())
        cfg = copy.deepcopy(self.cfg)
        cfg.policy.learn.multi_gpu = True
        here = NodeAffinitySchedulingStrategy(node_id=node, soft=False)
        return [learner_cls.options(num_cpus=cpus, scheduling_strategy=here).remote(cfg, self._resume_ckpt, Replica(rank, n, addr, port))
                for rank in range(n)]

    def _train_all(self, refs: List[Any]) -> List[Dict[str, Any]]:
        """The replicas' ``train`` results in rank order; a failure stops the run with one line
        naming the replica that died (the survivors fail too, in their next collective)."""
        import ray
        from ray.exceptions import RayActorError, RayError

        if len(refs) == 1:
            out: List[Dict[str, Any]] = ray.get(refs)
            return out
        rank_of = {ref: rank for rank, ref in enumerate(refs)}
        outs: Dict[int, Dict[str, Any]] = {}
        failed: Dict[int, RayError] = {}
        pending = list(refs)
        while pending:
            # after a first failure, a short wait for the others: the dead replica's own error names it
            ready, pending = ray.wait(pending, num_returns=1 if not failed else len(pending),
                                      timeout=None if not failed else FAILURE_GRACE_S)
            for ref in ready:
                try:
                    outs[rank_of[ref]] = ray.get(ref)
                except RayError as e:
                    failed[rank_of[ref]] = e
            if failed and not ready:
                break
        if failed:
            dead = [r for r, e in failed.items() if isinstance(e, RayActorError)] or sorted(failed)
            raise StrideError(f"learner replica rank {dead[0]} of {len(refs)} died ({_reason(failed[dead[0]])}); a "
                              f"replica cannot rejoin a running process group, so the run stopped; "
                              f"{latest_checkpoint(self.cfg.exp_name)}")
        return [outs[rank] for rank in range(len(refs))]

    def _new_collector(self, name: str, index: int, incarnation: int) -> Any:
        return self._collector_cls.options(num_cpus=self.sys.collector_cpus, max_restarts=0).remote(
            self.cfg, name, index, incarnation)

    def _dispatch(self, name: str) -> None:
        actor = self.collectors[name][0]
        meta, data = actor.collect.options(num_returns=2).remote(self.weights, self.train_iter, self.envstep,
                                                                 self.train_iter, *self.hook.collect_args(name))
        self.in_flight[meta] = (name, data)

    def _restart(self, name: str, error: BaseException) -> None:
        import ray

        actor, index, incarnation = self.collectors[name]
        if not self.delivered.get(name):  # its constructor or first collect failed: a bug or a bad config, not a fault
            reason = " ".join(str(error).split())[:400]
            raise StrideError(f"{name} incarnation {incarnation} died before its first batch, so it is not restarted "
                              f"(a restart would fail the same way): {reason}")
        self.counters.lost_batches += 1
        count = self.counters.deaths(name)
        limit = int(self.sys.max_collector_restarts)
        if 0 <= limit <= count:
            raise StrideError(f"{name} died {count + 1} times (system_config.max_collector_restarts={limit}): "
                              f"stopping ({type(error).__name__})")
        ray.kill(actor)
        self.collectors[name] = (self._new_collector(name, index, incarnation + 1), index, incarnation + 1)
        self.delivered[name] = 0
        self.hook.on_restart(name)
        self.counters.restarted(name, incarnation, self.envstep, self.train_iter)
        msg = (f"[coordinator] {name} incarnation {incarnation} died ({type(error).__name__}); 1 batch in flight "
               f"lost; restarted as incarnation {incarnation + 1}")
        self._log.warning(msg)
        print(f"stride: {msg}", file=sys.stderr, flush=True)

    def _learning(self) -> bool:
        """Whether gradient steps are still to come (``max_train_iter`` not reached)."""
        return self._max_train_iter is None or self.train_iter < self._max_train_iter

    def _learn(self, max_train_iter: Optional[int]) -> None:
        """The learner's next train call, when none is in flight and the replay ratio allows steps:
        that many batches the replay samples, passed to the learner by reference. Not awaited: the
        learner trains while the collectors collect and the driver routes; the next call's batches
        are drawn meanwhile (before this call's priorities come back, as Ape-X's learner prefetches)."""
        if self.fresh or self._training or self._starved or not self._learning():
            return  # on-policy: each unroll is trained on as it comes (:meth:`_learn_fresh`)
        n = self.ratio.train_steps()
        if max_train_iter is not None:
            n = min(n, max_train_iter - self.train_iter)
        if n <= 0:
            return
        # the batches drawn while the previous call trained, when they fit (a full call, or the last
        # one before max_train_iter, where the learner stops by itself)
        fits = n == self.ratio.max_call or (max_train_iter is not None and self.train_iter + n == max_train_iter)
        shards = self._prefetched if self._prefetched is not None and fits else self._sample(n)
        self._training = [learner.train.remote(batches, self.envstep, max_train_iter)
                          for learner, batches in zip(self.learners, shards)]
        self._asked = n
        self._prefetched = self._sample(self.ratio.max_call)  # the next call's, drawn while this one trains
        self.counters.train_sent()

    def _sample(self, n: int) -> List[Any]:
        """``n`` batches the replay draws, one ref per learner (replicas: each batch cut in equal
        parts, part i straight to replica i)."""
        size, replicas = int(self.cfg.policy.learn.batch_size), len(self.learners)
        if replicas == 1:
            return [self.replay.sample.remote(n, size, self.train_iter)]
        return list(self.replay.sample_shards.options(num_returns=replicas).remote(n, size, self.train_iter, replicas))

    def _learn_fresh(self, name: str, tag: BatchTag, data: Any, max_train_iter: Optional[int]) -> None:
        """On-policy: the learner trains once on the whole unroll ``data`` (a ref: it goes from the
        collector to the learner directly), or drops it as more than ``max_staleness`` versions old
        (:meth:`LearnerRole.train_fresh`); then that collector gets the weights just made, so the
        next unroll it sends is as fresh as the round of collectors allows (with K collectors
        taking turns, K - 1 versions old). No replay ratio: each unroll is trained on once."""
        out = self._train_all([self.learner.train_fresh.remote(tag, data, self.envstep, int(self.sys.max_staleness),
                                                               max_train_iter)])[0]
        self.counters.record(tag, out, self.train_iter, self.envstep)  # staleness as the learner got the unroll
        self.counters.dropped(tag, out, self.train_iter, int(self.sys.max_staleness))
        self.counters.train_calls += 1
        self._publish([out])
        self._dispatch(name)

    def _trained(self) -> None:
        """The train call in flight is done: its results published (:meth:`_publish`)."""
        outs = self._train_all(self._training)
        self._training = []
        self.counters.train_returned()
        self._publish(outs)

    def _publish(self, outs: List[Dict[str, Any]]) -> None:
        """After a train call (every replica's result, rank 0's first): its steps counted, the new
        weights published once (one object, loaded by every collector), the priorities sent to the
        replay."""
        out = outs[0]
        steps = int(out["train_iter"]) - self.train_iter
        if not self.fresh:  # an on-policy run has no replay ratio to count against
            self.ratio.trained(steps)
        self._starved = steps < self._asked
        self.counters.clocks["learner_busy_seconds"] += float(out.get("seconds", 0.0))
        if steps:
            self.train_iter = int(out["train_iter"])
            self.weights = self.learner.collect_state.remote()
            priorities = [p for o in outs for p in o["priorities"]]
            if any(priorities):
                self.replay.update_all.remote(priorities)
        self.last_log = out["last_log"]

    def _send(self, name: str) -> None:
        """``name``'s next collect, unless the replay ratio holds it back (it waits in :attr:`held`)."""
        if not self.fresh and self._learning() and not self.ratio.may_collect(len(self.in_flight)):
            self.held.append(name)
            self._held_since[name] = time.perf_counter()
            return
        self._dispatch(name)

    def _release(self) -> None:
        """Held collectors sent their collects while the ratio allows; when neither side could move
        otherwise (no collect out and no train call, the learner starved or waiting) one goes anyway."""
        stuck = not self.in_flight and not self._training
        while self.held and (stuck or not self._learning() or self.ratio.may_collect(len(self.in_flight))):
            if stuck and self._learning() and not self.ratio.may_collect(0):
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
        if self._training:
            self._trained()
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

        self._max_train_iter = max_train_iter
        self._record_pushes(wait=False)
        deadline = time.monotonic() + POLL_SECONDS
        while True:
            self._learn(max_train_iter)
            self._release()
            waiting = list(self.in_flight) + self._training[:1]
            if not waiting:
                return None
            ready, _ = ray.wait(waiting, num_returns=1, timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                return None
            if self._training and ready[0] == self._training[0]:
                self._trained()
                continue
            name, data = self.in_flight.pop(ready[0])
            try:
                meta: Dict[str, object] = ray.get(ready[0])
            except RayActorError as e:
                self._restart(name, e)
                self._send(name)
                return None
            self.delivered[name] = self.delivered.get(name, 0) + 1
            steps = as_int(meta["envstep"], "a batch's envstep")
            self.envstep += steps
            self.ratio.received(steps)
            self.counters.received(self.envstep, self.ratio.learn_start)
            self._starved = False
            tag = meta["tag"]
            assert isinstance(tag, BatchTag)  # what CollectorRole.collect returns
            if self.fresh:  # on-policy: no replay; trained on (or dropped) before its collector goes on
                self.hook.on_batch(meta)
                self._learn_fresh(name, tag, data, max_train_iter)
                return meta
            self._route(tag, data)
            self.hook.on_batch(meta)
            self._send(name)
            self._learn(max_train_iter)  # the learner starts on the new env steps at once
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
        """CPU-seconds the actors spent since the last call (the first: since they started), which
        the run's clock counts as training (an actor that died since its last call: not known)."""
        import ray
        from ray.exceptions import RayError

        actors = {f"learner{rank}": actor for rank, actor in enumerate(self.learners)}
        if self.replay is not None:
            actors["replay"] = self.replay
        actors.update({f"{name}#{incarnation}": actor for name, (actor, _, incarnation) in self.collectors.items()})
        refs = {name: actor.cpu_seconds.remote() for name, actor in actors.items()}
        now: Dict[str, float] = {}
        for name, ref in refs.items():
            try:
                now[name] = float(ray.get(ref))
            except RayError:  # died (its replacement is counted from its next call)
                continue
        spent = 0.0
        for name, cpu in now.items():
            before = self._cpu_seen.get(name, 0.0)
            spent += cpu - before if cpu >= before else cpu  # less than before: a restarted (new) process
        self._cpu_seen = now
        return spent

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
                **self.overlap()}

    def close(self) -> None:
        """Close every collector's envs, then end every actor this coordinator started."""
        import ray

        closing = [actor.close.remote() for actor, _, _ in self.collectors.values()]
        try:
            ray.get(closing, timeout=30)
        except Exception as e:  # a dead collector has nothing left to close
            self._log.warning(f"[coordinator] closing collectors: {type(e).__name__}")
        for actor in [a for a, _, _ in self.collectors.values()] + [*([] if self.replay is None else [self.replay]), *self.learners]:
            ray.kill(actor)


def replica_divergence(states: Sequence[Mapping[str, object]]) -> float:
    """The largest absolute difference between any tensor of rank 0's learn-mode ``state_dict``
    (weights, target weights, optimizer moments) and the same tensor of another replica: 0.0 when
    the replicas stayed in step, as averaged gradients keep them (0.0 for one learner)."""
    worst = 0.0

    def walk(a: object, b: object) -> None:
        nonlocal worst
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            if a.shape != b.shape:
                worst = math.inf
            elif a.numel():
                worst = max(worst, float((a.double() - b.double()).abs().max()))
        elif isinstance(a, Mapping) and isinstance(b, Mapping):
            for key in a:
                walk(a[key], b.get(key))
        elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            for x, y in zip(a, b):
                walk(x, y)

    for other in states[1:]:
        walk(states[0], other)
    return worst
