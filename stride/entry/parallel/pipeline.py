"""``parallel_pipeline``: collectors, a replay, a learner and an evaluator on Ray, driven by a coordinator.

    collector actors (K) ──(meta, samples)──► coordinator ──samples ref──► replay actor
          ▲  weights ref (one object per update)          │  sample refs
          └──────────────── learner actor ◄────────────────┘
    evaluator: in the driver, on the learner's eval weights, as in the serial pipeline

The loop itself is :class:`~.coordinator.Coordinator` (:mod:`.coordinator`: one collect in flight
per collector, one train call in flight on the learner, the replay ratio held by counting,
on-policy unrolls straight to the learner, learner replicas, collector and replay faults); its
counts are :mod:`.counters`. This module is the entry: it reads and checks the configs (one line
per mistake, before Ray starts), starts Ray and the run core, and drives the coordinator.

Resume (``resume=``, ``stride -m parallel --resume RUN``): the driver's checkpoints (Ctrl-C, best
evaluation, the final one) carry, beside the learner's state, the coordinator's counters, the run's
clocks and the evaluator's state (the hooks' periodic ones: as last saved), and every
run ends (stop, limit, Ctrl-C / SIGTERM) with a replay snapshot; a resumed run loads them all and
starts its collectors as new incarnations with the learner's weights, so its env steps, batches,
losses, CPU and wall seconds go on (``progress.csv`` and ``result.json`` count the whole run).
"""

from __future__ import annotations

import copy
import os
from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple, Union

from ...config import Config, compile_config
from ...policy.base_policy import Policy
from ...utils.errors import ConfigError
from ...utils.registry import import_components
from ...worker import BaseSerialEvaluator
from ..demonstrations import read_dataset
from ..run import Callback, Run, return_best
from ..run_state import DIST, PARALLEL, read_system_config
from ..serial_entry import finished_policy, load_cfg
from ..utils import build_env_manager, build_policy, check_cuda, check_spaces, read_config_file
from .cluster import START_TIMEOUT, check_address, joined_ray, local_ray, require_ray
from .actors import ActorFault, JoinedRoles, latest_checkpoint
from .coordinator import Coordinator
from .ratio import compile_ratio
from .system import compile_system_config, cpus_needed

#: a config as ``parallel_pipeline`` takes it: [main_config, create_config, system_config] or a file's path
ParallelConfigInput = Union[str, Sequence[Mapping[str, object]]]


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
#: (``-m dist``): the learner and collectors that joined (:data:`~.coordinator.JoinedRoles`)
FindRoles = Callable[[Config, Config], JoinedRoles]


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
            cluster = local_ray(sys_cfg.num_cpus, run_dir=cfg.exp_name) if sys_cfg.address is None else \
                joined_ray(sys_cfg.address, namespace, deadline=join_deadline, wait=join_wait, run_dir=cfg.exp_name,
                           name="driver" if find_roles is None else "coordinator")
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
                    raise ActorFault(f"the run stopped: {type(e).__name__}: {reason}; "
                                     f"{latest_checkpoint(cfg.exp_name)}") from None
                finally:
                    coordinator.close()
                result["ray_start_seconds"] = round(float(info["start_seconds"]), 3)  # type: ignore[arg-type]
        finally:
            evaluator_env.close()
        return_best(policy, evaluator, result)
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

