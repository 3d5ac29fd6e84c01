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
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import torch

from ...config import Config
from ...data import create_buffer
from ...policy.base_policy import Policy
from ...utils.errors import StrideError
from ...utils.files import atomic_write
from ...utils.log import build_tb_writer
from ...utils.narrow import as_mapping
from ...utils.registry import import_components
from ...utils.seed import set_pkg_seed
from ...worker import BaseLearner, create_collector
from ...worker.learner.learner import Batch
from ..utils import build_env_manager, build_policy
from .tags import BatchTag, TagLedger

#: a role's seed offset per collector index and incarnation: distinct env and exploration streams
SEED_STRIDE = 1000


def _prepare(cfg: Config, seed: int) -> None:
    """What every role process does first: registries filled, one torch thread, its RNGs seeded."""
    import_components()
    torch.set_num_threads(int(cfg.get("num_threads", 1)))
    set_pkg_seed(seed, use_cuda=bool(cfg.policy.cuda))


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


class CollectorRole:
    """One collector: an env manager, a policy's collect mode and the serial collector over them.

    ``collect`` loads the broadcast weights (when new), runs one serial ``collect`` call and returns
    ``(meta, data)``: the batch's :class:`BatchTag` and counters, and the samples."""

    def __init__(self, cfg: Config, name: str, index: int, incarnation: int = 0) -> None:
        seed = int(cfg.seed) + SEED_STRIDE * (index + 1) + incarnation
        _prepare(cfg, seed)
        self.name, self.incarnation = name, incarnation
        self._seq = 0
        self._policy = build_policy(cfg, enable_field=["collect"])
        self._env = build_env_manager(cfg, seed)
        self._collector = create_collector(cfg.policy.collect.collector, self._env, self._policy.collect_mode,
                                           exp_name=cfg.exp_name, instance_name=name)
        self._policy_iter = -1  # the learner iteration of the loaded weights (-1: the initial ones)

    def collect(self, weights: Optional[Mapping[str, object]], policy_iter: int, envstep: int, train_iter: int
                ) -> Tuple[Dict[str, object], Sequence[object]]:
        """One collect with ``weights`` (a collect-mode ``state_dict``; None: keep the current ones),
        exploration as at global ``envstep`` / ``train_iter``."""
        mode = self._policy.collect_mode
        if weights is not None and policy_iter != self._policy_iter:
            mode.load_state_dict(dict(weights))
            self._policy_iter = policy_iter
        before = self._collector.envstep
        data = self._collector.collect(train_iter=train_iter, policy_kwargs=mode.collect_kwargs(envstep, train_iter))
        tag = BatchTag(self.name, self.incarnation, self._seq, max(self._policy_iter, 0))
        self._seq += 1
        meta = {"tag": tag, "envstep": self._collector.envstep - before, "episodes": self._collector.episode_count}
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
    taken since counted as gaps (their numbers are skipped)."""

    def __init__(self, cfg: Config, snapshot_path: Optional[str], snapshot_freq: int = 50) -> None:
        _prepare(cfg, int(cfg.seed))
        self._buffer = create_buffer(cfg.policy.other.replay_buffer, seed=int(cfg.seed), exp_name=cfg.exp_name)
        self._ledger = TagLedger()
        self._path, self._freq = snapshot_path, int(snapshot_freq)
        self._since_snapshot = 0
        self.restored = False
        if snapshot_path is not None and os.path.isfile(snapshot_path):
            state = read_snapshot(snapshot_path)
            self._buffer.load_state_dict(as_mapping(state["buffer"], "replay snapshot 'buffer'"))
            self._ledger.load_state_dict(as_mapping(state["ledger"], "replay snapshot 'ledger'"))
            self.restored = True

    def push(self, tag: BatchTag, data: Sequence[Mapping[str, object]], envstep: int) -> Dict[str, object]:
        """Store ``data`` unless its tag was seen; returns the verdict and the ledger's counters."""
        verdict = self._ledger.admit(tag)
        if verdict.store:
            self._buffer.push(data, cur_collector_envstep=envstep)
            self._since_snapshot += 1
            if self._path is not None and self._since_snapshot >= self._freq:
                self.snapshot()
        return {"admitted": verdict.store, "gap": verdict.gap, "restored": self.restored, "pid": os.getpid(),
                **self._ledger.summary()}

    def sample(self, n: int, size: int, train_iter: int) -> List[Optional[Batch]]:
        """``n`` batches of ``size`` (None where the buffer refuses one: too few items)."""
        return [self._buffer.sample_batch(size, train_iter) for _ in range(n)]

    def update(self, infos: Sequence[Optional[Mapping[str, object]]]) -> None:
        """Priorities the learner computed, one info per trained batch."""
        for info in infos:
            if info:
                self._buffer.update(info)

    def count(self) -> int:
        return int(self._buffer.count())

    def summary(self) -> Dict[str, object]:
        return {"restored": self.restored, "count": self.count(), **self._ledger.summary()}

    def snapshot(self) -> None:
        """Write the buffer and the ledger (a checkpoint-format file: tensors and plain values only)."""
        if self._path is None:
            return
        state = {"buffer": self._buffer.state_dict(), "ledger": self._ledger.state_dict()}
        atomic_write(self._path, lambda f: torch.save(state, f), binary=True)
        self._since_snapshot = 0

    def pid(self) -> int:
        return os.getpid()

    def cpu_seconds(self) -> float:
        return time.process_time()


class LearnerRole:
    """The serial :class:`BaseLearner` (hooks, text and TensorBoard logs, checkpoints) on a policy;
    its weights leave as ``state_dict``s of the collect and eval modes."""

    def __init__(self, cfg: Config, resume_ckpt: Optional[str] = None) -> None:
        _prepare(cfg, int(cfg.seed))
        self._policy: Policy = build_policy(cfg)
        self._tb = build_tb_writer(cfg.exp_name)
        self._learner = BaseLearner(cfg.policy.learn.learner, self._policy.learn_mode, self._tb, cfg.exp_name)
        self._learner.call_hook("before_run")
        if resume_ckpt is not None:
            self._learner.load_checkpoint(resume_ckpt)

    def train(self, batches: Sequence[Optional[Batch]], envstep: int, max_train_iter: Optional[int] = None
              ) -> Dict[str, object]:
        """One ``BaseLearner.train`` per batch (None batches skipped, none past ``max_train_iter``);
        returns the iteration reached, the last log and the priority infos (one per batch trained)."""
        learner = self._learner
        priorities: List[Optional[Dict[str, object]]] = []
        log: Dict[str, object] = {}
        for batch in batches:
            if batch is None or (max_train_iter is not None and learner.train_iter >= max_train_iter):
                continue
            log = learner.train(batch, envstep)
            priorities.append(learner.priority_info)
        return {"train_iter": learner.train_iter, "log": log, "last_log": dict(learner.last_log),
                "priorities": priorities}

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

    def save_checkpoint(self, name: Optional[str] = None) -> Optional[str]:
        return self._learner.save_checkpoint(name)

    def finish(self) -> None:
        """``after_run`` hooks (log flush, final checkpoint) and the TensorBoard file closed."""
        self._learner.call_hook("after_run")
        if self._tb is not None:
            self._tb.close()

    def pid(self) -> int:
        return os.getpid()

    def cpu_seconds(self) -> float:
        return time.process_time()
