"""``system_config``: how many of each role the parallel pipeline runs and what each may use.

The third part of a parallel config (``[main_config, create_config, system_config]``), as in
DI-engine's parallel configs, where it names paths and the communication mode; here it names the
counts and the resources (Ray's CPU shares), validated like any config section: an unknown key or a
value out of range is one line naming it and the valid choices.
"""

from __future__ import annotations

from typing import Dict, Mapping, Optional

from ...config import Config
from ...config.config import merge_config
from ...config.setting import Setting
from ...utils.errors import ConfigError


def declared_system_config() -> Dict[str, object]:
    """The keys of ``system_config``, their defaults and valid values."""
    return dict(
        # (int) collector actors, each with its own env manager of env.collector_env_num envs.
        collector_num=Setting(2, "[1, inf)"),
        # (int) learners; > 1: data-parallel replicas in one torch.distributed group (gloo on CPU,
        # NCCL on GPU), each training on its 1/learner_num share of every batch (batch_size must divide).
        learner_num=Setting(1, "[1, inf)"),
        # (float) Ray CPU share of each collector actor, of each learner and of the replay actor.
        collector_cpus=Setting(0.5, "[0, inf)"),
        learner_cpus=Setting(0.5, "[0, inf)"),
        replay_cpus=Setting(0.0, "[0, inf)"),
        # (int) CPUs of the local Ray instance (None: the machine's); ignored when joining a cluster.
        num_cpus=Setting(None, "[1, inf)", kind=int),
        # (str) join this running Ray cluster ('HOST:PORT') instead of starting a local instance.
        address=None,
        # (int) replay snapshots: one every this many stored batches (restored when the actor dies).
        replay_snapshot_freq=Setting(50, "[1, inf)"),
        # (int) restarts of each collector actor after it dies (-1: no limit).
        max_collector_restarts=Setting(-1, "[-1, inf)"),
        # (int) on-policy policies (PPO, A2C): an unroll collected with weights more than this many
        # learner versions (train_iter) older than the learner's is dropped, counted ('stale_dropped').
        # 1: a collector is sent the new weights the moment its unroll is trained on, so with 2
        # collectors taking turns every unroll is 0 or 1 version old; PPO's clipped ratio on the
        # stored log-probs keeps a step on 1-version-old data as safe as its own second epoch is,
        # while older data would drift off its trust region (IMPALA's v-trace is for that lag).
        max_staleness=Setting(1, "[0, inf)"),
        # (float) gradient steps per env step, held by a rate limiter (stride.entry.parallel.ratio):
        # the learner waits when ahead, collectors wait when more than replay_tolerance env steps
        # ahead. None: what the serial config implies, update_per_collect / (n_sample x unroll_len).
        replay_ratio=Setting(None, "(0, inf)", kind=float),
        # (int) env steps before the first gradient step. None: the serial run's, the random warm-up
        # (policy.random_collect_size) and at least one batch (batch_size x unroll_len env steps).
        learn_start=Setting(None, "[0, inf)", kind=int),
        # (int) env steps the collectors may run ahead of the learner. None: room for every collector's
        # collect in flight and two train calls (see stride.entry.parallel.ratio.default_tolerance).
        replay_tolerance=Setting(None, "[1, inf)", kind=int),
    )


def compile_system_config(system: Optional[Mapping[str, object]]) -> Config:
    """``system`` merged over the defaults and checked (resources must fit the local instance)."""
    cfg = merge_config(declared_system_config(), dict(system or {}), prefix="system_config.")
    address = cfg.address
    if address is not None and (not isinstance(address, str) or ":" not in address):
        raise ConfigError(f"system_config.address={address!r} is not 'HOST:PORT'; valid choices: None (start a "
                          "local Ray instance) or a running cluster's 'HOST:PORT'")
    return cfg


def cpus_needed(cfg: Config) -> float:
    """Ray CPU shares the actors ask for together."""
    return float(cfg.collector_num * cfg.collector_cpus + cfg.learner_num * cfg.learner_cpus + cfg.replay_cpus)
