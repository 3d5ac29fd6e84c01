"""The actors of a ``-m parallel`` run and their lifecycle: started, restarted, measured, stopped.

:class:`RunActors` is the part of :class:`~.coordinator.Coordinator` that owns the Ray actors: the
replay (none on-policy), the learner or its replicas (``system_config.learner_num``; see
:mod:`.training` for how they train together) and the collectors, or (``-m dist``) the learner and
collectors that joined from other processes. It starts them with the CPU shares the system config
gives, numbers each collector's incarnations (a resumed run's start above the ones the replay's
ledger saw, so their batches are never taken for duplicates), replaces a collector that died by a
new incarnation (fresh envs and seeds; the batch it had in flight counted lost), sums the CPU
seconds the actors spent, and ends them all. A collector that dies before its first batch is not
restarted: that is a bug or a bad config, which a restart would only repeat.
"""

from __future__ import annotations

import copy
import logging
import os
import re
from typing import Any, Callable, Collection, Dict, List, NamedTuple, Optional, Tuple, Type

from ...config import Config
from ...torch_utils.dist import DEFAULT_ADDR, free_port
from ...utils.errors import ConfigError, StrideError
from ..utils import resolve_resume
from .counters import Counters
from .roles import CollectorRole, LearnerRole, ReplayRole, Replica
from .system import cpus_needed

#: a collector that joined from another process: ``(actor handle, name, index)``
Joined = Tuple[Any, str, int]


class JoinedRoles(NamedTuple):
    """A learner and collectors that joined from other processes (``-m dist``), and where later
    collectors come from: ``newcomers(present)`` (``present``: the names of the collectors the run
    has now) returns the ones that joined since its last call; the coordinator asks it every turn of
    its loop and takes each in at once. Joined collectors are elastic: one that dies has left (its
    batch in flight counted lost, ``result['collectors_left']``) and is not replaced."""

    learner: Any
    collectors: List[Joined]
    newcomers: Callable[[Collection[str]], List[Joined]]


class ActorFault(StrideError):
    """An actor the run cannot go on without died (a learner replica, a collector past its restart
    limit) or Ray itself failed: a fault at run time, not a mistake in the command, so the
    ``stride`` command exits with 1 (its one line says what died and where the run's checkpoint is)."""

    exit_code = 1


def reason(error: BaseException) -> str:
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


class RunActors:
    """The run's actors (see the module docstring), started on a connected Ray: ``replay`` (None
    on-policy), ``learners`` (rank 0 first; ``learner`` is rank 0: weights, eval weights,
    checkpoints, logs) and ``collectors`` (name -> (actor, index, incarnation)), made of the
    ``roles`` classes (collector, learner: a run's hook may extend them); ``joined``: the ones that
    joined instead (``-m dist``); ``resume_ckpt``: the checkpoint the learners load; ``log``: the
    coordinator's log."""

    def __init__(self, cfg: Config, sys_cfg: Config, roles: Tuple[Type[CollectorRole], Type[LearnerRole]], fresh: bool,
                 resume_ckpt: Optional[str], joined: Optional[JoinedRoles], log: logging.Logger) -> None:
        import ray

        self.cfg, self.sys, self._resume_ckpt, self._log = cfg, sys_cfg, resume_ckpt, log
        self._learner_cls: Any = ray.remote(roles[1])
        resources: Dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]  # (untyped in Ray 2.60)
        available = float(resources.get("CPU", 0.0))
        if cpus_needed(sys_cfg) > available:
            raise ConfigError(f"system_config asks for {cpus_needed(sys_cfg):g} CPUs (collector_num x collector_cpus "
                              f"+ learner_num x learner_cpus + replay_cpus) but the Ray cluster has {available:g}: lower them")
        # actor handles are typed Any: Ray's stubs type their methods as the plain ones, without .remote
        self._collector_cls: Any = ray.remote(roles[0])
        snapshot = os.path.join(cfg.exp_name, "replay_snapshot.pth.tar")
        self.replay: Any = None if fresh else ray.remote(ReplayRole).options(
            num_cpus=sys_cfg.replay_cpus, max_restarts=-1, max_task_retries=-1).remote(
            cfg, snapshot, sys_cfg.replay_snapshot_freq)
        self.collectors: Dict[str, Tuple[Any, int, int]] = {}  # name -> (actor, index, incarnation)
        self.delivered: Dict[str, int] = {}  # batches of each collector's current incarnation
        self._cpu_seen: Dict[str, float] = {}  # each actor's CPU-seconds at the last cpu_seconds()
        # a resumed run: the newest incarnation of each collector its replay's ledger saw (its own start above them)
        self._seen = self._replay_incarnations() if resume_ckpt is not None else {}
        if joined is None:
            self.learners: List[Any] = self._new_learners()
            for i in range(sys_cfg.collector_num):
                name = f"collector{i}"
                first = self._seen.get(name, -1) + 1
                self.collectors[name] = (self._new_collector(name, i, first), i, first)
        else:  # -m dist: the learner and collectors that joined
            self.learners = [joined.learner]
            if resume_ckpt is not None:  # its own process built it: it is told the checkpoint here
                self._wait(joined.learner.resume.remote(resume_ckpt), f"the learner could not resume from {resume_ckpt}")
            for actor, name, index in joined.collectors:
                self.take_in(actor, name, index)
        self.learner: Any = self.learners[0]

    def take_in(self, actor: Any, name: str, index: int) -> None:
        """``-m dist``: a collector that joined (at the start or later) is one of the run's. In a
        resumed run one whose name the replay's ledger saw is renewed one incarnation above it
        (:meth:`~.roles.CollectorRole.renew`), so its batches are not taken for duplicates."""
        incarnation = self._seen.get(name, -1) + 1
        if incarnation:
            self._wait(actor.renew.remote(incarnation), f"{name} could not start as incarnation {incarnation}")
        self.collectors[name] = (actor, index, incarnation)

    @staticmethod
    def _wait(ref: Any, what: str) -> None:
        """An actor call's end; its failure one line saying ``what``."""
        import ray
        from ray.exceptions import RayError

        try:
            ray.get(ref)
        except RayError as e:
            raise StrideError(f"{what}: {reason(e)}") from None

    def _replay_incarnations(self) -> Dict[str, int]:
        import ray

        if self.replay is None:  # on-policy: the learner's ledger starts anew with the resumed run
            return {}
        seen: Dict[str, int] = ray.get(self.replay.incarnations.remote())
        return seen

    def _new_learners(self) -> List[Any]:
        """One learner actor, or ``learner_num`` replicas on one node (see :mod:`.training`)."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        learner_cls = self._learner_cls
        cpus, n = self.sys.learner_cpus, int(self.sys.learner_num)
        if n == 1:
            return [learner_cls.options(num_cpus=cpus).remote(self.cfg, self._resume_ckpt)]
        node, addr, port = ray.get(ray.remote(replica_rendezvous).options(num_cpus=0).remote())
        cfg = copy.deepcopy(self.cfg)
        cfg.policy.learn.multi_gpu = True
        here = NodeAffinitySchedulingStrategy(node_id=node, soft=False)
        return [learner_cls.options(num_cpus=cpus, scheduling_strategy=here).remote(cfg, self._resume_ckpt, Replica(rank, n, addr, port))
                for rank in range(n)]

    def _new_collector(self, name: str, index: int, incarnation: int) -> Any:
        return self._collector_cls.options(num_cpus=self.sys.collector_cpus, max_restarts=0).remote(
            self.cfg, name, index, incarnation)

    def restart(self, name: str, error: BaseException, counters: Counters, envstep: int, train_iter: int) -> str:
        """Collector ``name`` died (``error``) with one batch in flight: counted lost, and the
        collector replaced by its next incarnation, unless it never delivered a batch or died
        ``max_collector_restarts`` times (then the run stops with one line); the line to report."""
        import ray

        actor, index, incarnation = self.collectors[name]
        if not self.delivered.get(name):  # its constructor or first collect failed: a bug or a bad config, not a fault
            text = " ".join(str(error).split())[:400]
            raise StrideError(f"{name} incarnation {incarnation} died before its first batch, so it is not restarted "
                              f"(a restart would fail the same way): {text}")
        counters.lost_batches += 1
        count = counters.deaths(name)
        limit = int(self.sys.max_collector_restarts)
        if 0 <= limit <= count:
            raise ActorFault(f"{name} died {count + 1} times (system_config.max_collector_restarts={limit}): "
                             f"stopping ({type(error).__name__}); {latest_checkpoint(self.cfg.exp_name)}")
        ray.kill(actor)
        self.collectors[name] = (self._new_collector(name, index, incarnation + 1), index, incarnation + 1)
        self.delivered[name] = 0
        counters.restarted(name, incarnation, envstep, train_iter)
        return (f"[coordinator] {name} incarnation {incarnation} died ({type(error).__name__}); 1 batch in flight "
                f"lost; restarted as incarnation {incarnation + 1}")

    def cpu_seconds(self) -> float:
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

    def close(self) -> None:
        """Close every collector's envs, then end every actor (a dead collector has nothing to close)."""
        import ray

        closing = [actor.close.remote() for actor, _, _ in self.collectors.values()]
        try:
            ray.get(closing, timeout=30)
        except Exception as e:  # a dead collector has nothing left to close
            self._log.warning(f"[coordinator] closing collectors: {type(e).__name__}")
        for actor in [a for a, _, _ in self.collectors.values()] + [*([] if self.replay is None else [self.replay]), *self.learners]:
            ray.kill(actor)
