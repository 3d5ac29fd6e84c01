"""The parallel pipeline's roles as plain classes: collector, replay, learner.

Each role wraps the serial worker classes unchanged (``SampleCollector`` / ``EpisodeCollector``
with its own env manager and policy collect mode, the configured replay buffer, ``BaseLearner``
with its hooks and checkpoints) and is built from the compiled config alone, so the same class
runs in-process (tests), as a Ray actor on this machine (``-m parallel``) or as an actor placed on
any node of a running cluster (the ``-m dist`` roles). Nothing here imports Ray: the pipeline
turns these classes into actors. What goes in and out is plain: config values, ``state_dict``s,
lists of sample dicts of arrays, column batches.

Unlike DI-engine's parallel mode (its own Flask coordinator, pickled files on a shared disk) the
data and weights move through Ray's object store, and unlike RLlib's EnvRunner / Learner classes
the roles add no algorithm code of their own: any registered policy runs, IMPALA as well as DQN.
"""

from __future__ import annotations

import os
import time
from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import torch

from ...config import Config
from ...data import ReplayBuffer, Ticket, create_buffer
from ...data.buffer.protocol import Sampled
from ...policy.base_policy import Policy
from ...torch_utils.dist import check_same, dist_finalize, dist_init, in_process_group
from ...utils.errors import ConfigError, StrideError
from ...utils.files import atomic_write
from ...utils.log import build_tb_writer
from ...utils.narrow import as_int, as_mapping
from ...utils.registry import import_components
from ...worker import BaseLearner, create_collector
from ...worker.collector import collect_at_random
from ...worker.learner.learner import Batch, read_checkpoint
from ..demonstrations import with_demonstrations
from ..run import denormals_flushed, seed_run
from ..utils import build_env_manager, build_policy, sample_transforms
from .tags import BatchTag, TagLedger, Verdict

#: a role's seed offset per collector index and incarnation: distinct env and exploration streams
SEED_STRIDE = 1000


def _prepare(cfg: Config, seed: int) -> None:
    """What every role process does first: registries filled, one torch thread, its RNGs seeded."""
    import_components()
    seed_run(cfg, seed)  # the run core's: threads and RNGs, as the driver's


def read_snapshot(path: str) -> Dict[str, object]:
    """A replay snapshot, loaded with ``weights_only`` (no code runs); a damaged one is one line."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # truncated, not a snapshot, or objects a safe load refuses
        raise StrideError(f"replay snapshot '{path}' cannot be read ({type(e).__name__}): delete it to start "
                          "the replay empty") from None
    if not isinstance(state, dict) or not {"buffer", "ledger"} <= state.keys():
        raise StrideError(f"replay snapshot '{path}' is not a Stride replay snapshot (no buffer and ledger in it)")
    return state


#: how long a learner replica may wait in a collective: the coordinator calls ``train`` on every
#: replica together, so only a replica that died (or hangs) makes the others wait this long
REPLICA_TIMEOUT_S = 600.0


def shard_batch(batch: Optional[Batch], shards: int) -> List[Optional[Batch]]:
    """``batch`` cut into ``shards`` equal consecutive parts (columns: rows of every array, nested
    dicts alike; a list of samples or episodes: its items); ``shards`` Nones for a None batch.

    Replica ``i`` trains on part ``i``: with equal parts, the mean of the replicas' mean-loss
    gradients is the gradient of the whole batch's mean loss, so ``N`` replicas take the step one
    learner takes on the whole batch (prioritized replay's IS weights stay normalised over the
    whole batch, as the replay drew it)."""
    if shards < 1:
        raise ConfigError(f"shards={shards}: valid choices: a whole number >= 1")
    if batch is None:
        return [None] * shards
    if isinstance(batch, Mapping):
        size = _rows(batch)
        if size % shards:
            raise ConfigError(f"a batch of {size} rows cannot be split into {shards} equal shards; valid choices: a "
                              f"policy.learn.batch_size divisible by system_config.learner_num={shards}")
        k = size // shards
        return [_slice_columns(batch, i * k, (i + 1) * k) for i in range(shards)]
    items = list(batch)
    if len(items) % shards:
        raise ConfigError(f"a batch of {len(items)} items cannot be split into {shards} equal shards; valid choices: "
                          f"a policy.learn.batch_size divisible by system_config.learner_num={shards}")
    k = len(items) // shards
    return [items[i * k:(i + 1) * k] for i in range(shards)]


def shard_sampled(sampled: Optional[Sampled], shards: int) -> List[Optional[Sampled]]:
    """A sampled ``(batch, ticket)`` cut as :func:`shard_batch` cuts the batch, each part with its rows' ticket."""
    if sampled is None:
        return [None] * shards
    batch, ticket = sampled
    k = len(ticket.ids) // shards
    return [(part, ticket.part(i * k, (i + 1) * k)) for i, part in enumerate(shard_batch(batch, shards))
            if part is not None]


def _rows(columns: Mapping[str, object]) -> int:
    """The leading dimension shared by every array of ``columns`` (nested mappings included)."""
    sizes = set()
    for key, value in columns.items():
        if isinstance(value, Mapping):
            sizes.add(_rows(value))
        elif isinstance(value, (np.ndarray, torch.Tensor)) and value.ndim > 0:
            sizes.add(int(value.shape[0]))
        else:
            raise ConfigError(f"batch column {key!r} is a {type(value).__name__}, not an array with one row per "
                              "sample: it cannot be split between learner replicas")
    if len(sizes) != 1:
        raise ConfigError(f"batch columns have different row counts {sorted(sizes)}: they cannot be split between "
                          "learner replicas")
    return sizes.pop()


def _slice_columns(columns: Mapping[str, object], start: int, stop: int) -> Dict[str, object]:
    out: Dict[str, object] = {}
    for key, value in columns.items():
        if isinstance(value, Mapping):
            out[key] = _slice_columns(value, start, stop)
        elif isinstance(value, (np.ndarray, torch.Tensor)):
            out[key] = value[start:stop]
    return out


class Replica(NamedTuple):
    """A learner's place among data-parallel replicas: its rank, their number, and where rank 0
    listens for the others (``addr``: 127.0.0.1, all replicas on one node; ``port``: a free one
    found on that node)."""

    rank: int
    world_size: int
    addr: str
    port: int


class CollectorRole:
    """One collector: an env manager, a policy's collect mode and the serial collector over them.

    ``collect`` loads the broadcast weights (when new), runs one serial ``collect`` call and returns
    ``(meta, data)``: the batch's :class:`BatchTag` and counters, and the samples.

    A run that extends the coordinator (:class:`~.coordinator.CoordinatorHook`) extends this role by
    a subclass: :meth:`env_objects` gives its envs what it adds, ``collect`` takes its extra
    arguments (the league's collector: :class:`~.league.LeagueCollectorRole`)."""

    def __init__(self, cfg: Config, name: str, index: int, incarnation: int = 0) -> None:
        self._cfg, self.name, self._index = cfg, name, index
        self._start(incarnation)

    def _start(self, incarnation: int) -> None:
        """RNGs, policy, envs and serial collector of ``incarnation``, batches numbered from 0."""
        cfg = self._cfg
        seed = int(cfg.seed) + SEED_STRIDE * (self._index + 1) + incarnation
        _prepare(cfg, seed)
        # the serial run's random warm-up (off-policy): collects dispatched before the run's env step
        # reaches policy.random_collect_size act uniformly at random (collect_at_random, as serially)
        self._seed = seed
        self._warm_up = 0 if cfg.policy.get("on_policy") else int(cfg.policy.get("random_collect_size") or 0)
        self.incarnation, self._seq = incarnation, 0
        self._policy = build_policy(cfg, enable_field=["collect"])
        objects = self.env_objects(cfg)
        self._env = build_env_manager(cfg, seed, env_objects=objects or None)
        self._collector = create_collector(cfg.policy.collect.collector, self._env, self._policy.collect_mode,
                                           exp_name=cfg.exp_name, instance_name=self.name,
                                           sample_transforms=sample_transforms(cfg))
        self._policy_iter = -1  # the learner iteration of the loaded weights (-1: the initial ones)

    def renew(self, incarnation: int) -> None:
        """Start over as ``incarnation``, as if built so: its envs closed, then RNGs, policy, envs
        and collector made anew for it, batches numbered from 0. A resumed ``-m dist`` run renews
        each collector that joins under a name its replay's ledger saw, one incarnation above it
        (as ``-m parallel`` starts its own), so its batches are not taken for the previous run's
        duplicates; the process, placed where its user started it, stays."""
        self._collector.close()
        self._start(incarnation)

    @property
    def policy(self) -> Policy:
        """The policy this collector acts with (its collect mode enabled)."""
        return self._policy

    def env_objects(self, cfg: Config) -> Dict[str, object]:
        """Objects this collector's envs are built with (``build_env_manager``'s ``env_objects``),
        made after the policy: none here; a subclass adds its own (the league's matchmaker)."""
        return {}

    def collect(self, weights: Optional[Mapping[str, object]], policy_iter: int, envstep: int, train_iter: int
                ) -> Tuple[Dict[str, object], Sequence[object]]:
        """One collect with ``weights`` (a collect-mode ``state_dict``; None: keep the current ones),
        exploration as at global ``envstep`` / ``train_iter``."""
        mode = self._policy.collect_mode
        if weights is not None and policy_iter != self._policy_iter:
            mode.load_state_dict(dict(weights))
            self._policy_iter = policy_iter
        before = self._collector.envstep
        data: Sequence[object]
        if envstep < self._warm_up:
            data = collect_at_random(self._collector, mode, int(np.random.SeedSequence([self._seed, before]).generate_state(1)[0]))
        else:
            data = self._collector.collect(train_iter=train_iter, policy_kwargs=mode.collect_kwargs(envstep, train_iter))
        tag = BatchTag(self.name, self.incarnation, self._seq, max(self._policy_iter, 0))
        self._seq += 1
        meta: Dict[str, object] = {"tag": tag, "envstep": self._collector.envstep - before,
                                   "episodes": self._collector.episode_count}
        return meta, data

    def collect_state(self) -> Dict[str, object]:
        """The weights this collector acts with (its collect mode's ``state_dict``)."""
        return self._policy.collect_mode.state_dict()

    def pid(self) -> int:
        """The process serving this role (for fault tests and operators)."""
        return os.getpid()

    def cpu_seconds(self) -> float:
        """CPU time of this process so far (the pipeline's CPU accounting)."""
        return time.process_time()

    def close(self) -> None:
        """Close the envs (their subprocesses and shared memory, where the manager has them)."""
        self._collector.close()


class ReplayRole:
    """The replay buffer behind a :class:`TagLedger`: each batch stored once, lost ones counted.

    Every ``snapshot_freq`` stored batches the buffer's and the ledger's states are written
    atomically to ``snapshot_path``; a role built where a snapshot exists starts from it (``restored``),
    so a replay actor that dies comes back with the data of its last snapshot and the batches it had
    taken since counted as gaps (their numbers are skipped).

    A policy with ``policy.collect.data_path`` (R2D3, SQIL) gets the demonstrations beside the
    agent's replay, as the serial pipeline gives them (:func:`~stride.entry.demonstrations.with_demonstrations`:
    read through a collect mode built here, checked against the config's env spaces)."""

    def __init__(self, cfg: Config, snapshot_path: Optional[str], snapshot_freq: int = 50) -> None:
        _prepare(cfg, int(cfg.seed))
        self._buffer: ReplayBuffer = create_buffer(cfg.policy.other.replay_buffer, seed=int(cfg.seed),
                                                   exp_name=cfg.exp_name)
        if cfg.policy.collect.get("data_path"):
            spaces = build_env_manager(cfg, int(cfg.seed), evaluator=True)  # not launched: its spaces only
            self._buffer = with_demonstrations(cfg, build_policy(cfg, enable_field=["collect"]), self._buffer,
                                               spaces.observation_space, spaces.action_space, exp=cfg.exp_name)
        self._ledger = TagLedger()
        self._path, self._freq = snapshot_path, int(snapshot_freq)
        self._since_snapshot = 0
        self._pushed_items = 0  # items (samples, sequences) ever stored: what a restart loses is counted in them
        self.restored = False
        if snapshot_path is not None and os.path.isfile(snapshot_path):
            self.load_state_dict(read_snapshot(snapshot_path))
            self.restored = True
        # the counts this process started from (a restarted one's: its snapshot's), so the driver can
        # tell what was stored after the snapshot and died with the previous process
        self._started_from = {"restored_stored": self._ledger.stored, "restored_items": self._pushed_items}

    def push(self, data: Sequence[object], cur_collector_envstep: int = -1, tag: Optional[BatchTag] = None
             ) -> Dict[str, object]:
        """Store ``data`` unless its tag was seen (untagged data: always); returns the verdict, the
        ledger's counters, the items stored so far and what this process started from (a restarted
        one: its snapshot's stored batches and items)."""
        verdict = self._ledger.admit(tag) if tag is not None else Verdict(True, 0)
        if verdict.store:
            self._buffer.push(data, cur_collector_envstep=cur_collector_envstep)
            self._pushed_items += len(data)
            self._since_snapshot += 1
            if self._path is not None and self._since_snapshot >= self._freq:
                self.snapshot()
        return {"admitted": verdict.store, "gap": verdict.gap, "restored": self.restored, "pid": os.getpid(),
                "pushed_items": self._pushed_items, **self._started_from, **self._ledger.summary()}

    def sample_batch(self, size: int, cur_learner_iter: int = -1) -> Optional[Sampled]:
        """One ``(batch, ticket)`` of ``size`` (None while the buffer refuses: too few items)."""
        return self._buffer.sample_batch(size, cur_learner_iter)

    def sample(self, n: int, size: int, train_iter: int) -> List[Optional[Sampled]]:
        """``n`` of :meth:`sample_batch` (one Ray call)."""
        return [self.sample_batch(size, train_iter) for _ in range(n)]

    def sample_shards(self, n: int, size: int, train_iter: int, shards: int) -> List[List[Optional[Sampled]]]:
        """``n`` batches of ``size``, each cut by :func:`shard_sampled`: element ``i`` holds every batch's
        part ``i``, the share of learner replica ``i`` (one Ray return each: the parts go from here
        to their replica directly)."""
        parts = [shard_sampled(b, shards) for b in self.sample(n, size, train_iter)]
        return [[p[i] for p in parts] for i in range(shards)]

    def update(self, ticket: Ticket, priorities: object) -> None:
        """The learner's priorities for the rows ``ticket`` names."""
        self._buffer.update(ticket, priorities)

    def update_all(self, pairs: Sequence[Tuple[Ticket, object]]) -> None:
        """:meth:`update` for each ``(ticket, priorities)`` the learners sent back (one Ray call)."""
        for ticket, priorities in pairs:
            self.update(ticket, priorities)

    def count(self) -> int:
        return int(self._buffer.count())

    def clear(self) -> None:
        self._buffer.clear()

    def state_dict(self) -> Dict[str, object]:
        """The buffer's and the ledger's states and the items stored so far (what a snapshot holds)."""
        return {"buffer": self._buffer.state_dict(), "ledger": self._ledger.state_dict(),
                "pushed_items": self._pushed_items}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self._buffer.load_state_dict(as_mapping(state["buffer"], "replay snapshot 'buffer'"))
        self._ledger.load_state_dict(as_mapping(state["ledger"], "replay snapshot 'ledger'"))
        self._pushed_items = as_int(state.get("pushed_items", 0), "replay snapshot 'pushed_items'")  # 0: an older one

    def incarnations(self) -> Dict[str, int]:
        """The newest incarnation of each collector the ledger has seen (a restored one's included)."""
        return self._ledger.incarnations()

    def summary(self) -> Dict[str, object]:
        return {"restored": self.restored, "count": self.count(), **self._ledger.summary()}

    def snapshot(self) -> None:
        """Write the buffer and the ledger (a checkpoint-format file: tensors and plain values only)."""
        if self._path is None:
            return
        state = self.state_dict()
        atomic_write(self._path, lambda f: torch.save(state, f), binary=True)
        self._since_snapshot = 0

    def pid(self) -> int:
        return os.getpid()

    def cpu_seconds(self) -> float:
        return time.process_time()


class HeldState:
    """A state the learner's checkpoints carry for another process (:meth:`LearnerRole.hold`); a
    resumed learner reads it back like any registered component."""

    def __init__(self) -> None:
        self._state: Dict[str, object] = {}

    def state_dict(self) -> Dict[str, object]:
        return self._state

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self._state = dict(state)


class LearnerRole:
    """The serial :class:`BaseLearner` (hooks, text and TensorBoard logs, checkpoints) on a policy;
    its weights leave as ``state_dict``s of the collect and eval modes.

    With ``replica`` it is one of ``replica.world_size`` data-parallel replicas: it joins their
    process group before its policy is built (``policy.learn.multi_gpu=True``: the policy takes
    rank 0's initial weights and averages gradients in every optimiser step), and only rank 0
    writes (checkpoints, text and TensorBoard logs); the others keep no experiment folder. Without
    ``replica`` no process group exists, as for a serial run."""

    def __init__(self, cfg: Config, resume_ckpt: Optional[str] = None, replica: Optional[Replica] = None) -> None:
        rank = 0 if replica is None else replica.rank
        _prepare(cfg, int(cfg.seed) + rank)  # each replica its own RNG streams; weights come from rank 0
        multi_gpu = bool(cfg.policy.learn.multi_gpu)
        if multi_gpu != (replica is not None):
            raise ConfigError(f"policy.learn.multi_gpu={multi_gpu} but this learner is "
                              f"{'a replica' if replica else 'alone'}: the pipeline sets it from system_config.learner_num")
        self._own_group = False
        if replica is not None:
            self._own_group = dist_init(rank=replica.rank, world_size=replica.world_size, addr=replica.addr,
                                        port=replica.port, backend="nccl" if cfg.policy.cuda and torch.cuda.is_available()
                                        else "gloo", timeout_s=REPLICA_TIMEOUT_S)
        self.rank = rank
        exp = cfg.exp_name if rank == 0 else None
        self._policy: Policy = build_policy(cfg)
        self._tb = build_tb_writer(exp)
        self._learner = BaseLearner(cfg.policy.learn.learner, self._policy.learn_mode, self._tb, exp)
        self._held: Dict[str, HeldState] = {}
        # on-policy (train_fresh): the tags of the unrolls that came straight here, and the stale ones dropped
        self._ledger = TagLedger()
        self.stale_dropped = 0
        self._learner.call_hook("before_run")
        if resume_ckpt is not None:
            self.resume(resume_ckpt)

    def resume(self, ckpt: str) -> None:
        """Go on from the run's checkpoint ``ckpt``: weights, optimiser, iteration, RNGs, and the
        driver's components it carries, which stay in every checkpoint from here on (the hooks'
        periodic ones too) until the driver holds newer ones. ``-m parallel`` builds its learner
        with it; a ``-m dist`` learner, started by its own process, is told by the coordinator
        that resumes the run. A learner that trained already is refused: its state is a run of its own."""
        if self._learner.train_iter or self._ledger.stored:
            raise StrideError(f"this learner trained already (train_iter {self._learner.train_iter}) and cannot take "
                              f"the checkpoint {ckpt}: restart its process")
        components = as_mapping(read_checkpoint(ckpt).get("components", {}), "checkpoint 'components'")
        for name, state in components.items():
            self.hold(str(name), as_mapping(state, f"checkpoint 'components.{name}'"))
        self._learner.load_checkpoint(ckpt)

    def hold(self, name: str, state: Mapping[str, object]) -> None:
        """Put ``state`` (a driver's component, e.g. the league's) into every checkpoint
        from now on, as ``components[name]``, until held again (the hooks' periodic checkpoints too)."""
        if name not in self._held:
            self._held[name] = HeldState()
            self._learner.register_state(name, self._held[name])
        self._held[name].load_state_dict(state)

    @property
    def policy(self) -> Policy:
        """The policy this learner trains (every mode enabled)."""
        return self._policy

    @denormals_flushed()
    def train(self, batches: Sequence[Optional[Sampled]], envstep: int, max_train_iter: Optional[int] = None
              ) -> Dict[str, object]:
        """One ``BaseLearner.train`` per sampled ``(batch, ticket)`` (None skipped, none past ``max_train_iter``);
        returns the iteration reached, the learner's last written log, the ``(ticket, priorities)`` pairs and
        the call's wall ``seconds`` (the learner's busy time: the pipeline reports its idle time)."""
        start = time.perf_counter()
        learner = self._learner
        priorities: List[Tuple[Ticket, object]] = []
        # replicas must step together (each step all-reduces): a mismatch is an error, never a hang
        check_same(sum(b is not None for b in batches), "the batches of one train call")
        for sampled in batches:
            if sampled is None or (max_train_iter is not None and learner.train_iter >= max_train_iter):
                continue
            batch, ticket = sampled
            learner.train(batch, envstep)
            if learner.priority is not None:
                priorities.append((ticket, learner.priority))
        # the step's own log stays in the actor (its values may be device tensors); last_log is the
        # learner's latest written log, plain numbers
        return {"train_iter": learner.train_iter, "last_log": dict(learner.last_log),
                "priorities": priorities, "seconds": time.perf_counter() - start}

    @denormals_flushed()
    def train_fresh(self, tag: BatchTag, data: Sequence[Mapping[str, object]], envstep: int, max_staleness: int,
                    max_train_iter: Optional[int] = None) -> Dict[str, object]:
        """On-policy (PPO, A2C): one ``BaseLearner.train`` on a collector's whole unroll ``data``
        (inside it the policy makes its own steps: PPO's epochs of minibatches), as the serial
        pipeline does without a buffer -- unless the unroll's weights are more than
        ``max_staleness`` versions (``train_iter``) behind this learner's: then it is dropped and
        counted (``stale_dropped``). A tag seen before is a duplicate (:class:`TagLedger`), never
        trained on twice. Returns what :meth:`ReplayRole.push` and :meth:`train` return together.

        The learner decides, not the coordinator: its ``train_iter`` is the version the unroll is
        measured against at the moment it would train. RLlib's PPO keeps its data fresh by
        sampling in lockstep (its env runners wait while the learner trains); here the other
        collectors go on collecting during a train call and each unroll's age is checked instead."""
        learner = self._learner
        verdict = self._ledger.admit(tag)
        staleness = tag.staleness(learner.train_iter)
        fresh = staleness <= max_staleness
        if verdict.store and not fresh:
            self.stale_dropped += 1
        trained = verdict.store and fresh and (max_train_iter is None or learner.train_iter < max_train_iter)
        if trained:
            learner.train(list(data), envstep)
        return {"admitted": verdict.store, "gap": verdict.gap, "restored": False, "pid": os.getpid(),
                **self._ledger.summary(), "trained": trained, "staleness": staleness,
                "stale_dropped": self.stale_dropped, "train_iter": learner.train_iter,
                "last_log": dict(learner.last_log), "priorities": []}

    def summary(self) -> Dict[str, object]:
        """On-policy: the counters of the unrolls :meth:`train_fresh` took (as :meth:`ReplayRole.summary`),
        with the stale ones dropped."""
        return {"restored": False, "count": 0, **self._ledger.summary(), "stale_dropped": self.stale_dropped}

    def collect_state(self) -> Dict[str, object]:
        """The collect mode's ``state_dict`` (what collectors load)."""
        return self._policy.collect_mode.state_dict()

    def eval_state(self) -> Dict[str, object]:
        return self._policy.eval_mode.state_dict()

    def learn_state(self) -> Dict[str, object]:
        return self._policy.learn_mode.state_dict()

    @property
    def train_iter(self) -> int:
        return self._learner.train_iter

    def save_checkpoint(self, name: Optional[str] = None, envstep: Optional[int] = None) -> Optional[str]:
        """A checkpoint now; ``envstep``: the run's env steps, which it records (the learner's own
        count is the one of its last train call)."""
        if envstep is not None:
            self._learner.collector_envstep = envstep
        return self._learner.save_checkpoint(name)

    def finish(self, envstep: Optional[int] = None) -> None:
        """``after_run`` hooks (log flush, final checkpoint at ``envstep``, as in :meth:`save_checkpoint`),
        the TensorBoard file closed and the replicas' process group left."""
        if envstep is not None:
            self._learner.collector_envstep = envstep
        self._learner.call_hook("after_run")
        if self._tb is not None:
            self._tb.close()
        if self._own_group and in_process_group():
            dist_finalize()

    def pid(self) -> int:
        return os.getpid()

    def cpu_seconds(self) -> float:
        return time.process_time()
