"""``parallel_pipeline``: collectors, a replay, a learner and an evaluator on Ray, driven by a coordinator.

    collector actors (K) ──(meta, samples)──► coordinator ──samples ref──► replay actor
          ▲  weights ref (one object per update)          │  sample refs
          └──────────────── learner actor ◄────────────────┘
    evaluator: in the driver, on the learner's eval weights, as in the serial pipeline

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

Resume (``resume=``, ``stride -m parallel --resume RUN``): the driver's checkpoints (Ctrl-C, best
evaluation, the final one) carry, beside the learner's state, the coordinator's counters, the run's
clocks and the evaluator's state (the hooks' periodic ones: as last saved), and every
run ends (stop, limit, Ctrl-C / SIGTERM) with a replay snapshot; a resumed run loads them all and
starts its collectors as new incarnations with the learner's weights, so its env steps, batches,
losses, CPU and wall seconds go on (``progress.csv`` and ``result.json`` count the whole run).
"""

from __future__ import annotations

import copy
import math
import os
import re
import sys
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import torch

from ...config import Config, compile_config
from ...policy.base_policy import Policy
from ...torch_utils.dist import DEFAULT_ADDR, free_port
from ...utils.errors import ConfigError, StrideError
from ...utils.log import build_logger
from ...utils.narrow import as_int, as_list, as_mapping
from ...utils.registry import import_components
from ...worker import BaseSerialEvaluator
from ...worker.learner.learner import read_checkpoint
from ...worker.protocols import ScalarWriter
from ..demonstrations import read_dataset
from ..run import Callback, Run
from ..run_state import DIST, PARALLEL, read_system_config
from ..serial_entry import finished_policy, load_cfg
from ..utils import build_env_manager, build_policy, check_cuda, check_spaces, read_config_file, resolve_resume
from .cluster import START_TIMEOUT, check_address, joined_ray, local_ray, require_ray
from .ratio import compile_ratio
from .roles import CollectorRole, LearnerRole, ReplayRole, Replica
from .system import compile_system_config, cpus_needed
from .tags import BatchTag

#: a config as ``parallel_pipeline`` takes it: [main_config, create_config, system_config] or a file's path
ParallelConfigInput = Union[str, Sequence[Mapping[str, object]]]

#: seconds the coordinator waits for a collector before it looks at signals again
POLL_SECONDS = 0.5


def read_parallel_config(input_cfg: ParallelConfigInput) -> Tuple[Dict[str, object], Dict[str, object], Dict[str, object]]:
    """``[main, create, system]`` (system optional) or a config file defining them."""
    if isinstance(input_cfg, str):
        parts = read_config_file(input_cfg)
        return parts["main_config"], parts["create_config"], parts.get("system_config") or {}
    if not isinstance(input_cfg, (list, tuple)) or len(input_cfg) not in (2, 3):
        raise ConfigError("give [main_config, create_config, system_config] or a config file's path, got "
                          f"{type(input_cfg).__name__}")
    main, create = dict(input_cfg[0]), dict(input_cfg[1])
    system = dict(input_cfg[2]) if len(input_cfg) == 3 else {}
    return main, create, system


def parallel_pipeline(
    input_cfg: Optional[ParallelConfigInput],
    seed: int = 0,
    max_train_iter: Optional[int] = None,
    max_env_step: Optional[int] = None,
    exp_name: Optional[str] = None,
    progress: bool = True,
    resume: Optional[str] = None,
    callbacks: Optional[Sequence[Callback]] = None,
) -> Policy:
    """Train with ``system_config.collector_num`` collector actors, a replay actor and a learner
    actor on Ray (a local instance started and stopped here, or ``system_config.address``);
    returns the trained policy with the run's summary in ``policy.result``.

    Off-policy policies through a replay buffer, on-policy ones (PPO, A2C) on each fresh unroll
    (see the module docstring); a run of the run core (:class:`~stride.entry.run.Run`) as
    ``serial_pipeline``'s: the same stopping rules (the evaluator's stop value, ``max_env_step``,
    ``max_train_iter``, Ctrl-C / SIGTERM, a callback), the same ``progress.csv`` and
    ``result.json`` columns (the parallel ones after them). ``resume``: a ``-m parallel`` run's
    experiment folder or checkpoint, continued as ``serial_pipeline``'s ``resume=`` continues a
    serial run (its saved configs and limits; a run that ended is not trained again): the learner,
    its optimiser, the replay (its snapshot as the run ended), the counters and clocks go on; the
    collectors start fresh episodes with the learner's weights (an asynchronous run is not replayed
    exactly, as the serial one is). ``callbacks``: :class:`~stride.entry.run.RunCallback` objects
    (``on_collect`` after each batch, ``on_train`` after each train call that moved the learner,
    ``on_eval``); learner hooks are refused (the learner is a Ray actor)."""
    import_components()
    resume_ckpt: Optional[str] = None
    if resume is not None:
        cfg, resume_ckpt = load_cfg(None, seed, exp_name, resume, mode=PARALLEL)
        sys_cfg = compile_system_config(read_system_config(cfg.exp_name))
    else:
        if input_cfg is None:
            raise ConfigError("give a config ([main_config, create_config, system_config] or a config file) or resume=")
        main, create, system = read_parallel_config(input_cfg)
        sys_cfg = compile_system_config(system)
        cfg = compile_config(copy.deepcopy(main), create_cfg=copy.deepcopy(create), seed=seed, exp_name=exp_name,
                             save_cfg=False)
    check_fresh(cfg, sys_cfg)
    if cfg.policy.collect.get("data_path"):  # demonstrations (R2D3, SQIL): the replay actor mixes them in
        check_demonstrations(cfg)
    check_replicas(cfg, sys_cfg)
    compile_ratio(cfg, sys_cfg)  # a bad replay ratio is one line before Ray starts
    require_ray()
    if sys_cfg.address is None and cpus_needed(sys_cfg) > (sys_cfg.num_cpus or os.cpu_count() or 1):
        raise ConfigError(f"system_config asks for {cpus_needed(sys_cfg):g} CPUs (collector_num x collector_cpus + "
                          f"learner_num x learner_cpus + replay_cpus) but the local instance has {sys_cfg.num_cpus or os.cpu_count()}:"
                          " lower them (fractions are fine, e.g. collector_cpus=0.5)")
    if sys_cfg.address is None:  # every role on this machine; on a cluster the learner's node may have the GPU
        check_cuda(cfg)
    else:
        check_address(sys_cfg.address)  # before anything is written
    return train_on_ray(cfg, sys_cfg, max_train_iter, max_env_step, progress, resume_ckpt=resume_ckpt,
                        callbacks=callbacks)


#: what ``train_on_ray`` asks for on a connected Ray when the roles joined from other processes
#: (``-m dist``): ``(learner handle, [(collector handle, name, index), ...])``
FindRoles = Callable[[Config, Config], Tuple[Any, List[Tuple[Any, str, int]]]]


def train_on_ray(cfg: Config, sys_cfg: Config, max_train_iter: Optional[int], max_env_step: Optional[int],
                 progress: bool, namespace: Optional[str] = None, find_roles: Optional[FindRoles] = None,
                 new_dir: bool = True, join_deadline: Optional[float] = None,
                 join_wait: float = START_TIMEOUT, resume_ckpt: Optional[str] = None,
                 callbacks: Optional[Sequence[Callback]] = None) -> Policy:
    """The coordinator's run on a compiled config: ``parallel_pipeline``'s and ``-m dist``'s one loop,
    on the run core (:class:`~stride.entry.run.Run`: folder, limits, seeding, TensorBoard,
    checkpoint components, signals, evaluations and clocks, ``result.json``).

    ``find_roles`` (on the connected Ray, in ``namespace``) hands over a learner and collectors that
    other processes started (``-m dist --module learner|collector``); without it the coordinator
    starts every role itself. ``new_dir=False`` uses the experiment folder as it exists (made by
    ``-m dist --module config``). ``join_deadline`` (``time.monotonic()``) bounds the connection
    to a running cluster (``-m dist``'s ``--wait`` of ``join_wait`` s). ``resume_ckpt``: the run
    in ``cfg.exp_name`` goes on from this checkpoint (its folder and records as they are)."""
    mode = PARALLEL if find_roles is None else DIST
    with Run(cfg, mode, max_env_step=max_env_step, max_train_iter=max_train_iter, resume_ckpt=resume_ckpt,
             progress=progress, callbacks=callbacks) as run:
        done = run.already_finished()
        if resume_ckpt is not None and done is not None:  # the run already ended: its result
            return finished_policy(cfg, None, resume_ckpt, done)
        evaluator_env = build_env_manager(cfg, cfg.seed, evaluator=True)
        try:
            check_spaces(cfg, evaluator_env)
            policy = build_policy(cfg, enable_field=["learn", "eval"])
            cluster = local_ray(sys_cfg.num_cpus) if sys_cfg.address is None else \
                joined_ray(sys_cfg.address, namespace, deadline=join_deadline, wait=join_wait)
            with cluster as info:  # first: a Ray that does not start leaves no experiment folder
                run.open(files={"system_config.json": dict(sys_cfg)}, renew=new_dir)
                evaluator = BaseSerialEvaluator(cfg.policy.eval.evaluator, evaluator_env, policy.eval_mode, run.tb,
                                                run.exp)
                from ray.exceptions import RayError

                coordinator = Coordinator(cfg, sys_cfg, run, None if find_roles is None else find_roles(cfg, sys_cfg))
                run.register_state("evaluator", evaluator)
                run.register_state("clock", run.record)  # a resumed run's CPU / wall seconds go on
                try:
                    result = coordinator.run(evaluator, policy)
                except RayError as e:  # the learner (not restarted: its state is the run) or Ray itself failed
                    reason = " ".join(str(e).split())[:400]
                    raise StrideError(f"the run stopped: {type(e).__name__}: {reason}; its checkpoints are in "
                                      f"{os.path.join(cfg.exp_name, 'ckpt')}") from None
                finally:
                    coordinator.close()
                result["ray_start_seconds"] = round(float(info["start_seconds"]), 3)  # type: ignore[arg-type]
        finally:
            evaluator_env.close()
        policy.result = run.finish(result, coordinator.train_iter)
    return policy


def check_demonstrations(cfg: Config) -> None:
    """``policy.collect.data_path`` read once here, so a bad one is one line before Ray starts; a
    folder is made absolute, as the replay actor that reads it again may run elsewhere."""
    path = str(cfg.policy.collect.data_path)
    if os.path.exists(path):
        cfg.policy.collect.data_path = os.path.abspath(path)
    read_dataset(cfg, None, None)


def check_fresh(cfg: Config, sys_cfg: Config) -> None:
    """An on-policy policy trains on each collector's fresh unroll whole, in one learner: its
    minibatches are the policy's own (PPO's ``batch_size``), so there is nothing to cut between replicas."""
    if cfg.policy.on_policy and int(sys_cfg.learner_num) != 1:
        raise ConfigError(f"system_config.learner_num={sys_cfg.learner_num} with on-policy policy '{cfg.policy.type}': "
                          "an unroll trains in one learner; valid choices: learner_num=1")


def check_replicas(cfg: Config, sys_cfg: Config) -> None:
    """Learner replicas are ``system_config.learner_num``: ``policy.learn.multi_gpu`` is set from it
    (for the learner actors only), and every batch must split into equal parts."""
    if cfg.policy.learn.multi_gpu:
        raise ConfigError("policy.learn.multi_gpu=True: in -m parallel the learner replicas are "
                          "system_config.learner_num; valid choices: policy.learn.multi_gpu=False with "
                          "system_config.learner_num=N (N > 1 for replicas)")
    n, size = int(sys_cfg.learner_num), int(cfg.policy.learn.batch_size)
    if size % n:
        raise ConfigError(f"policy.learn.batch_size={size} does not split into system_config.learner_num={n} equal "
                          f"parts; valid choices: a batch_size divisible by {n}")


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


class Coordinator:
    """The driver's loop: starts the actors, routes batches and weights, restarts dead collectors.

    Built on a connected Ray (local or joined) for a :class:`~stride.entry.run.Run` (its folder
    open); ``close()`` stops every actor it started or was handed (``roles``: a learner and
    collectors that joined, see :data:`FindRoles`). The run's checkpoint components (this
    coordinator's counters among them, :meth:`state_dict`) go into the learner actor's checkpoints
    (:meth:`save_checkpoint`). A resumed run (``run.resume_ckpt``) goes on from its checkpoint: the
    learner loads it (weights, optimiser, counters), the replay actor its snapshot, the run's
    components their states (:meth:`begin`); the collectors start as new incarnations with the
    learner's weights. :meth:`next_batch` is one turn of the loop and
    :meth:`summary` its end, so a run with its own evaluation (the league's,
    :mod:`.league`) drives the same coordinator; :meth:`received` sees each batch's meta first."""

    def __init__(self, cfg: Config, sys_cfg: Config, run: Run,
                 roles: Optional[Tuple[Any, List[Tuple[Any, str, int]]]] = None) -> None:
        import ray

        if run.learner_hooks:
            raise ConfigError(f"learner hooks ({', '.join(type(h).__name__ for h in run.learner_hooks)}) run in a "
                              "local learner; -m parallel's learner is a Ray actor: valid choices: RunCallback "
                              "objects (on_train sees every train call), or -m serial with the hooks")
        self.cfg, self.sys, self.core = cfg, sys_cfg, run
        self.ratio = compile_ratio(cfg, sys_cfg)  # a bad replay_ratio stops the run before any actor starts
        self._resume_ckpt = resume_ckpt = run.resume_ckpt
        resumed = read_checkpoint(resume_ckpt) if resume_ckpt is not None else {}
        self._resumed = {str(name): as_mapping(state, f"checkpoint 'components.{name}'") for name, state in
                         as_mapping(resumed.get("components", {}), "checkpoint 'components'").items()}
        # a league run: the ref of the driver's League.state_dict() its collectors match from, its
        # version, and the version each collector was sent (a state is sent once per collector)
        self.league_ref: Any = None
        self.league_version = 0
        self._league_sent: Dict[str, int] = {}
        self._tb: Optional[ScalarWriter] = run.tb
        self._log = build_logger(cfg.exp_name, "coordinator")
        resources: Dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]  # (untyped in Ray 2.60)
        available = float(resources.get("CPU", 0.0))
        if cpus_needed(sys_cfg) > available:
            raise ConfigError(f"system_config asks for {cpus_needed(sys_cfg):g} CPUs (collector_num x collector_cpus "
                              f"+ learner_num x learner_cpus + replay_cpus) but the Ray cluster has {available:g}: lower them")
        # actor handles are typed Any: Ray's stubs type their methods as the plain ones, without .remote
        self._collector_cls: Any = ray.remote(CollectorRole)
        snapshot = os.path.join(cfg.exp_name, "replay_snapshot.pth.tar")
        # on-policy: no replay; each collector's unroll goes to the learner whole (:meth:`_learn_fresh`)
        self.fresh = bool(cfg.policy.on_policy)
        self.replay: Any = None if self.fresh else ray.remote(ReplayRole).options(
            num_cpus=sys_cfg.replay_cpus, max_restarts=-1, max_task_retries=-1).remote(
            cfg, snapshot, sys_cfg.replay_snapshot_freq)
        self.collectors: Dict[str, Tuple[Any, int, int]] = {}  # name -> (actor, index, incarnation)
        if roles is None:
            self.learners: List[Any] = self._new_learners()
            # resumed: each collector a new incarnation of the one the replay's ledger saw last
            seen = self._replay_incarnations() if resume_ckpt is not None else {}
            for i in range(sys_cfg.collector_num):
                name = f"collector{i}"
                first = seen.get(name, -1) + 1
                self.collectors[name] = (self._new_collector(name, i, first), i, first)
        else:  # -m dist: the learner and collectors that joined
            self.learners = [roles[0]]
            self.collectors = {name: (actor, index, 0) for actor, name, index in roles[1]}
        self.learner: Any = self.learners[0]  # rank 0: weights, eval weights, checkpoints, logs
        self.delivered: Dict[str, int] = {}  # batches of each collector's current incarnation
        self.in_flight: Dict[Any, Tuple[str, Any]] = {}  # meta ref -> (collector name, samples ref)
        self.envstep = 0
        self.train_iter = 0
        self.weights: Any = None  # ref of the learner's latest collect-mode state_dict (None: initial weights)
        self.restarts: List[Dict[str, Any]] = []
        self.lost_batches = 0
        self.staleness: List[int] = []  # this process's batches; the resumed ones' are in self._before
        self.replay_pids: List[int] = []
        self._replay_last: Dict[str, Any] = {}
        self.last_log: Dict[str, Any] = {}
        self.stale_dropped = 0  # on-policy: unrolls older than system_config.max_staleness, not trained on
        if self.fresh:  # on-policy: the first unrolls too come from the learner's weights (their log-probs are its)
            self.weights = self.learner.collect_state.remote()
        self.held: List[str] = []  # collectors the replay ratio holds back (their next collect not sent yet)
        self._held_since: Dict[str, float] = {}
        self._training: List[Any] = []  # the train call in flight: one result ref per replica ([]: none)
        self._asked = 0  # gradient steps that call was asked for
        self._prefetched: Optional[List[Any]] = None  # the next call's batches, drawn while a call trains
        self._starved = False  # the last call took fewer steps than asked (the replay had too few items)
        self._pushes: List[Tuple[BatchTag, Any]] = []  # replay pushes not recorded yet, in arrival order
        self._max_train_iter: Optional[int] = None
        # where the time goes after the warm-up (wall seconds; reported, never used to decide anything)
        self._warm_t0: Optional[float] = None  # when the env steps passed learn_start
        self._warm_env0 = 0
        self._idle_since: Optional[float] = None
        self.clocks = {"after_warmup_wall_seconds": 0.0, "learner_busy_seconds": 0.0, "learner_idle_seconds": 0.0,
                       "collector_wait_seconds": 0.0}
        self.train_calls = 0
        self._before = {"batches": 0, "staleness_sum": 0, "staleness_max": 0, "replay_restarts": 0}
        self._cpu_seen: Dict[str, float] = {}  # each actor's CPU-seconds at the last actor_cpu()
        if resume_ckpt is not None:  # the counters go on from the checkpoint's; the collectors load its weights
            self.envstep = as_int(resumed["envstep"], "checkpoint 'envstep'")
            self.train_iter = as_int(resumed["train_iter"], "checkpoint 'train_iter'")
            self.weights = self.learner.collect_state.remote()
        run.register_state("coordinator", self)

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
        """The run's counters (batches, staleness, losses, restarts): a resumed run goes on from them."""
        stale = self.staleness or [0]
        return {"envstep": self.envstep, "batches": self._before["batches"] + len(self.staleness),
                "staleness_sum": self._before["staleness_sum"] + sum(self.staleness),
                "staleness_max": max(self._before["staleness_max"], max(stale)), "lost_batches": self.lost_batches,
                "collector_restarts": [dict(r) for r in self.restarts],
                "replay_restarts": self._before["replay_restarts"] + max(0, len(self.replay_pids) - 1)}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        """Go on from saved counters (:meth:`state_dict`)."""
        self._before = {key: as_int(state[key], f"coordinator state '{key}'")
                        for key in ("batches", "staleness_sum", "staleness_max", "replay_restarts")}
        self.envstep = max(self.envstep, as_int(state["envstep"], "coordinator state 'envstep'"))
        self.lost_batches = as_int(state["lost_batches"], "coordinator state 'lost_batches'")
        self.restarts = [dict(as_mapping(r, "coordinator state 'collector_restarts'"))
                         for r in as_list(state["collector_restarts"], "coordinator state 'collector_restarts'")]

    def _new_learners(self) -> List[Any]:
        """One learner actor, or ``learner_num`` replicas on one node (see the module docstring)."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        learner_cls = ray.remote(LearnerRole)
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

    def publish_league(self, state: Mapping[str, object]) -> None:
        """A league run: the collectors match their episodes from ``state`` (the driver's
        ``League.state_dict()``) from their next collect on; the learner's checkpoints carry it."""
        import ray

        self.league_version += 1
        self.league_ref = ray.put(dict(state))
        self.learner.hold.remote("league", self.league_ref)

    def _dispatch(self, name: str) -> None:
        actor = self.collectors[name][0]
        league = None
        if self.league_ref is not None and self._league_sent.get(name) != self.league_version:
            league, self._league_sent[name] = self.league_ref, self.league_version
        meta, data = actor.collect.options(num_returns=2).remote(self.weights, self.train_iter, self.envstep,
                                                                 self.train_iter, league, self.league_version)
        self.in_flight[meta] = (name, data)

    def _restart(self, name: str, error: BaseException) -> None:
        import ray

        actor, index, incarnation = self.collectors[name]
        if not self.delivered.get(name):  # its constructor or first collect failed: a bug or a bad config, not a fault
            reason = " ".join(str(error).split())[:400]
            raise StrideError(f"{name} incarnation {incarnation} died before its first batch, so it is not restarted "
                              f"(a restart would fail the same way): {reason}")
        self.lost_batches += 1
        count = sum(1 for r in self.restarts if r["collector"] == name)
        limit = int(self.sys.max_collector_restarts)
        if 0 <= limit <= count:
            raise StrideError(f"{name} died {count + 1} times (system_config.max_collector_restarts={limit}): "
                              f"stopping ({type(error).__name__})")
        ray.kill(actor)
        self.collectors[name] = (self._new_collector(name, index, incarnation + 1), index, incarnation + 1)
        self.delivered[name] = 0
        self._league_sent.pop(name, None)  # the new incarnation starts with the league of its config
        event = {"collector": name, "incarnation": incarnation, "lost_batches": 1, "envstep": self.envstep,
                 "train_iter": self.train_iter}
        self.restarts.append(event)
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
        self.train_calls += 1
        if self._idle_since is not None:
            self.clocks["learner_idle_seconds"] += time.perf_counter() - self._idle_since
        self._idle_since = None

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
        self._record(tag, out)  # staleness as the learner got the unroll
        if int(out["stale_dropped"]) > self.stale_dropped:
            self._log.warning(f"[coordinator] unroll {tuple(tag)[:3]} dropped: {out['staleness']} versions old "
                              f"(system_config.max_staleness={self.sys.max_staleness}); {out['stale_dropped']} so far")
        self.stale_dropped = int(out["stale_dropped"])
        if self._tb is not None:
            self._tb.add_scalar("parallel/stale_dropped", self.stale_dropped, self.train_iter)
        self.train_calls += 1
        self._publish([out])
        self._dispatch(name)

    def _trained(self) -> None:
        """The train call in flight is done: its results published (:meth:`_publish`)."""
        outs = self._train_all(self._training)
        self._training = []
        self._idle_since = time.perf_counter()
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
        self.clocks["learner_busy_seconds"] += float(out.get("seconds", 0.0))
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
            self.clocks["collector_wait_seconds"] += time.perf_counter() - self._held_since.pop(name)
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
                self._record(tag, push)
            del self._pushes[:done]

    def settle(self) -> None:
        """The run's end: the train call in flight and every push recorded, so the counters are final."""
        if self._training:
            self._trained()
        self._record_pushes(wait=True)
        if self._warm_t0 is not None:
            now = time.perf_counter()
            self.clocks["after_warmup_wall_seconds"] = now - self._warm_t0
            if self._idle_since is not None:
                self.clocks["learner_idle_seconds"] += now - self._idle_since
                self._idle_since = now

    def overlap(self) -> Dict[str, object]:
        """The replay ratio (target, achieved) and where the time went after the warm-up (from the
        batch that passed ``learn_start``): env steps and wall seconds, the learner's busy seconds
        (in its train calls) and idle ones (no call in flight), the collectors' held seconds; the
        rest of the learner's time is its calls' round trips (sampling, transfer, the driver). An
        on-policy run has no replay ratio (each unroll is trained on once)."""
        return {**({} if self.fresh else self.ratio.summary()), "after_warmup_env_steps": self.envstep - self._warm_env0 if self._warm_t0 else 0,
                **{k: round(v, 3) for k, v in self.clocks.items()}, "train_calls": self.train_calls}

    def _record(self, tag: BatchTag, push: Dict[str, Any]) -> None:
        stale = tag.staleness(self.train_iter)
        self.staleness.append(stale)
        if self._tb is not None:
            self._tb.add_scalar("parallel/staleness", stale, self.train_iter)
            self._tb.add_scalar("parallel/batch_gaps", push["gaps"], self.train_iter)
        if not push["admitted"]:
            self._log.warning(f"[coordinator] batch {tuple(tag)[:3]} not stored (duplicate or stale incarnation)")
        if push["gap"] > 0:
            self._log.warning(f"[coordinator] {push['gap']} batch(es) of {tag.collector} incarnation "
                              f"{tag.incarnation} missing before seq {tag.seq}")
        pid = push["pid"]
        if not self.replay_pids or self.replay_pids[-1] != pid:
            if self.replay_pids:
                msg = (f"[coordinator] the replay actor was restarted "
                       f"({'from its last snapshot' if push['restored'] else 'empty: no snapshot yet'})")
                self._log.warning(msg)
                print(f"stride: {msg}", file=sys.stderr, flush=True)
            self.replay_pids.append(pid)
        if len(self.staleness) % 100 == 0:
            recent = self.staleness[-100:]
            self._log.info(f"[coordinator] train_iter={self.train_iter} envstep={self.envstep} batches="
                           f"{len(self.staleness)} staleness_mean={sum(recent) / len(recent):.2f} "
                           f"staleness_max={max(recent)} stored={push['stored']} duplicates={push['duplicates']} "
                           f"gaps={push['gaps']} lost_in_collectors={self.lost_batches}")
        self._replay_last = push

    def received(self, meta: Mapping[str, object]) -> None:
        """A collector's batch arrived (before that collector's next collect is sent): nothing here;
        a league run records the batch's games."""

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
            if self._warm_t0 is None and self.envstep >= self.ratio.learn_start:
                self._warm_t0 = self._idle_since = time.perf_counter()
                self._warm_env0 = self.envstep
            self._starved = False
            tag = meta["tag"]
            assert isinstance(tag, BatchTag)  # what CollectorRole.collect returns
            if self.fresh:  # on-policy: no replay; trained on (or dropped) before its collector goes on
                self.received(meta)
                self._learn_fresh(name, tag, data, max_train_iter)
                return meta
            self._route(tag, data)
            self.received(meta)
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
        """A parallel run's columns of ``progress.csv``, after the serial ones: the last 100 batches'
        staleness and the batches lost so far."""
        recent = self.staleness[-100:] or [0]
        return {"staleness_mean": sum(recent) / len(recent), "staleness_max": max(recent),
                "lost_batches": self.lost_batches + int(self._replay_last.get("gaps", 0)),
                **({"stale_dropped": self.stale_dropped} if self.fresh else {})}

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
        counters = self.state_dict()
        batches = as_int(counters["batches"], "batches")
        return {
            "final_checkpoint": os.path.join(exp, "ckpt", f"iteration_{self.train_iter}.pth.tar"),
            "batches": batches, "batches_stored": replay["stored"], "duplicates": replay["duplicates"],
            "gaps": replay["gaps"], "lost_batches": self.lost_batches + int(replay["gaps"]),
            "collector_restarts": counters["collector_restarts"], "replay_restarts": counters["replay_restarts"],
            "staleness_mean": as_int(counters["staleness_sum"], "staleness") / max(batches, 1),
            "staleness_max": counters["staleness_max"],
            "learners": len(self.learners), "replica_max_weight_diff": replica_divergence(states),
            "stale_dropped": self.stale_dropped,
            **self.overlap(),
        }

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
