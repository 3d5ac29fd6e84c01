"""The learner's side of a ``-m parallel`` run: train calls, their batches, the weights they publish.

:class:`Training` is the part of :class:`~.coordinator.Coordinator` that drives the learner. One
train call is in flight at a time and never awaited by the loop: the learner trains while the
collectors collect and the driver routes, and the next call's batches are drawn by the replay
meanwhile (before this call's priorities come back, as Ape-X's learner prefetches). How many
gradient steps a call takes is the replay ratio's (:mod:`.ratio`). When a call returns its steps are
counted, the learner's collect-mode ``state_dict`` is published once (that one object in Ray's
object store is what every collector loads: the broadcast) and the priorities go to the replay.

On-policy (:meth:`Training.fresh_unroll`): a collector's whole unroll goes from the collector to
the learner directly, trained on once (PPO's epochs inside) or dropped as more than
``system_config.max_staleness`` versions old, and counted.

Learner replicas (``system_config.learner_num = N > 1``): N learner actors, pinned to one node,
form one torch.distributed group (gloo; rank 0 listens on 127.0.0.1 at a port found free on that
node) with ``policy.learn.multi_gpu=True``. The replay draws each batch of ``batch_size`` once and
cuts it in N equal parts, part ``i`` going straight to replica ``i``; the replicas average their
gradients, so one update of N replicas is the update one learner takes on the whole batch (not
N batches per step: that would change the algorithm's batch size with N). Every replica is called
with the same number of batches, so they always meet in the same collectives; rank 0 alone is
asked for weights, eval weights and checkpoints, and writes logs. A replica that dies stops the run
with one line naming its rank and the latest checkpoint (:meth:`Training.replica_results`): a
process-group member cannot rejoin a running group (torch.distributed would need every rank to
re-rendezvous, and the dead one's optimizer state is gone), so the honest answer is a clean stop
and a restart from the last checkpoint. On purpose unlike the peers: RLlib sizes batches per
learner (``train_batch_size_per_learner``), so adding learners changes the algorithm; DI-engine's
replicas need its launcher and a hard-coded port (10314). Here the pipeline places the replicas,
finds the port, keeps the algorithm's batch, and checks at the end that the replicas are still
identical (:func:`replica_divergence`).
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, Optional, Sequence

import torch

from ...config import Config
from .actors import ActorFault, RunActors, latest_checkpoint, reason
from .counters import Counters
from .ratio import ReplayRatio
from .tags import BatchTag

#: seconds the coordinator waits for the other replicas' errors after one replica failed
FAILURE_GRACE_S = 10.0


class Training:
    """The train call in flight (``calls``: one result ref per replica, [] when none), the
    learner's iteration the run has seen (``train_iter``), the latest published weights
    (``weights``: a ref of rank 0's collect-mode ``state_dict``; None: the initial ones) and its
    last log (``last_log``), for the run's ``actors`` under its replay ``ratio``."""

    def __init__(self, cfg: Config, sys_cfg: Config, actors: RunActors, ratio: ReplayRatio, counters: Counters,
                 fresh: bool, train_iter: int, weights: object) -> None:
        self.cfg, self.sys, self.actors, self.ratio, self.counters, self.fresh = cfg, sys_cfg, actors, ratio, counters, fresh
        self.train_iter, self.weights = train_iter, weights  # a Ray reference to the learner's collect state (None: initial)
        self.last_log: Dict[str, float] = {}
        self.calls: List[Any] = []  # the train call in flight: one result ref per replica ([]: none)
        self.max_train_iter: Optional[int] = None
        self.starved = False  # the last call took fewer steps than asked (the replay had too few items)
        self._asked = 0  # gradient steps that call was asked for
        self._prefetched: Optional[List[Any]] = None  # the next call's batches, drawn while a call trains

    def learning(self) -> bool:
        """Whether gradient steps are still to come (``max_train_iter`` not reached)."""
        return self.max_train_iter is None or self.train_iter < self.max_train_iter

    def learn(self, envstep: int) -> None:
        """The learner's next train call, when none is in flight and the replay ratio allows steps:
        that many batches the replay samples, passed to the learner by reference (see the module
        docstring)."""
        if self.fresh or self.calls or self.starved or not self.learning():
            return  # on-policy: each unroll is trained on as it comes (:meth:`fresh_unroll`)
        limit = self.max_train_iter
        n = self.ratio.train_steps()
        if limit is not None:
            n = min(n, limit - self.train_iter)
        if n <= 0:
            return
        # the batches drawn while the previous call trained, when they fit (a full call, or the last
        # one before max_train_iter, where the learner stops by itself)
        fits = n == self.ratio.max_call or (limit is not None and self.train_iter + n == limit)
        shards = self._prefetched if self._prefetched is not None and fits else self._sample(n)
        self.calls = [learner.train.remote(batches, envstep, limit) for learner, batches in zip(self.actors.learners, shards)]
        self._asked = n
        self._prefetched = self._sample(self.ratio.max_call)  # the next call's, drawn while this one trains
        self.counters.train_sent()

    def _sample(self, n: int) -> List[Any]:
        """``n`` batches the replay draws, one ref per learner (replicas: each batch cut in equal
        parts, part i straight to replica i)."""
        size, replicas, replay = int(self.cfg.policy.learn.batch_size), len(self.actors.learners), self.actors.replay
        if replicas == 1:
            return [replay.sample.remote(n, size, self.train_iter)]
        return list(replay.sample_shards.options(num_returns=replicas).remote(n, size, self.train_iter, replicas))

    def fresh_unroll(self, tag: BatchTag, data: object, envstep: int) -> None:
        """On-policy: the learner trains once on the whole unroll ``data`` (a ref: it goes from the
        collector to the learner directly), or drops it as more than ``max_staleness`` versions old
        (:meth:`~.roles.LearnerRole.train_fresh`); the caller then sends that collector the weights
        just made, so the next unroll it sends is as fresh as the round of collectors allows (with K
        collectors taking turns, K - 1 versions old). No replay ratio: each unroll is trained on once."""
        max_staleness = int(self.sys.max_staleness)
        out = self.replica_results([self.actors.learner.train_fresh.remote(tag, data, envstep, max_staleness,
                                                                          self.max_train_iter)])[0]
        self.counters.record(tag, out, self.train_iter, envstep)  # staleness as the learner got the unroll
        self.counters.dropped(tag, out, self.train_iter, max_staleness)
        self.counters.train_calls += 1
        self._publish([out])

    def trained(self) -> None:
        """The train call in flight is done: its results published (:meth:`_publish`)."""
        outs = self.replica_results(self.calls)
        self.calls = []
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
        self.starved = steps < self._asked
        self.counters.clocks["learner_busy_seconds"] += float(out.get("seconds", 0.0))
        if steps:
            self.train_iter = int(out["train_iter"])
            self.weights = self.actors.learner.collect_state.remote()
            priorities = [p for o in outs for p in o["priorities"]]
            if any(priorities):
                self.actors.replay.update_all.remote(priorities)
        self.last_log = out["last_log"]

    def replica_results(self, refs: List[Any]) -> List[Dict[str, Any]]:
        """The replicas' ``train`` results in rank order; a failure stops the run with one line
        naming the replica that died and the latest checkpoint (the survivors fail too, in their
        next collective)."""
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
            raise ActorFault(f"learner replica rank {dead[0]} of {len(refs)} died ({reason(failed[dead[0]])}); a "
                             f"replica cannot rejoin a running process group, so the run stopped; "
                             f"{latest_checkpoint(self.cfg.exp_name)}")
        return [outs[rank] for rank in range(len(refs))]


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
