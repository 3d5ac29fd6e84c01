"""``serial_pipeline``: collect -> buffer -> learn -> evaluate, in one process, until the stop value.

Off-policy policies get a replay buffer between collector and learner (``update_per_collect``
batches of ``batch_size`` per collect; priorities sent back when ``policy.priority``). On-policy
policies (``policy.on_policy``) get none -- the seeds' "remove buffer": every collect's fresh
samples go to one ``learner.train`` call, inside which the policy makes its own gradient steps
(PPO: epochs of minibatches), so there one ``train_iter`` is one collect. The loop body has no
branch on an algorithm. Ctrl-C saves a checkpoint at the next loop
boundary; ``resume=`` continues from one with train_iter, env steps, replay contents, envs'
in-flight episodes and RNG states restored, so a resumed run matches an uninterrupted one.

Learner replicas (``policy.learn.multi_gpu=True``, one process each, started by torchrun): every
replica runs this same loop with its own envs and seed (``seed + rank``) and its own replay buffer;
the policy averages gradients at every step (``Policy.sync_gradients``), so the replicas stay
identical and learn from the union of their data. Rank 0 alone writes the experiment folder, logs
and checkpoints and runs the evaluator; whether to stop is agreed on by all ranks (one collective
per decision), so they leave the loop together and no rank waits forever in an all-reduce.

A config with a ``reward_model`` section (GAIL, HER, RND) runs the same loop with the reward model
between collection and learning, as the seeds draw it: ``collect_data`` + ``train`` after each
collect (``clear_data`` every ``clear_buffer_per_iters`` train iterations), ``estimate`` on every
batch before ``learner.train``; its state is in the checkpoint. Without one these calls are absent.

A policy that declares ``policy.collect.data_path`` (SQIL, R2D3) gets the demonstrations there beside its
own replay (:func:`stride.entry.demonstrations.with_demonstrations`): the loop still sees one buffer,
whose batches mix the two (``policy.collect.demo_fraction``).
"""

from __future__ import annotations

import copy
import math
import os
import sys
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Protocol, Sequence, Tuple

import numpy as np
import torch

from ..config import Config, compile_config
from ..config.compile import load_saved_config
from ..data import create_buffer
from ..utils.errors import ConfigError
from ..utils.registry import import_components
from ..policy.base_policy import Policy
from ..torch_utils.dist import any_rank, dist_finalize, dist_init, get_rank, get_world_size, in_process_group
from ..config.compile import env_kwargs
from ..envs import BaseEnv
from ..reward_model.base import BaseRewardModel, create_reward_model
from ..utils.registry import ENV_REGISTRY
from ..worker import BaseLearner, BaseSerialEvaluator, create_collector
from ..worker.collector import EpisodeCollector, SampleCollector, collect_at_random
from ..worker.collector.base import SerialCollectorBase
from ..worker.protocols import EnvManager, ScalarWriter
from .demonstrations import with_demonstrations
from .run import Callback, EvalRecorder, Run, load_policy, resumed_limits, return_best, with_on_eval
from .run_state import SERIAL, check_resume_mode
from .utils import (ConfigInput, build_env_managers, build_policy, check_cuda, check_spaces, read_config, resolve_resume,
                    sample_transforms)

__all__ = ["serial_pipeline", "load_cfg", "resumed_limits", "EvalRecorder", "WarmUp", "random_collect",
           "finished_policy", "build_learner_evaluator", "Workers"]


def load_cfg(input_cfg: Optional[ConfigInput], seed: int, exp_name: Optional[str], resume: Optional[str],
             mode: str = SERIAL) -> Tuple[Config, Optional[str]]:
    """The compiled config of a run and the checkpoint to resume from: the saved
    ``total_config.json`` of ``resume``'s experiment (checked like a user config; a run that
    another ``mode`` made is refused first, see :func:`~stride.entry.run_state.check_resume_mode`),
    or ``input_cfg`` compiled for ``seed`` (shared by the serial, offline and league entries);
    ``policy.cuda=True`` without CUDA is refused here."""
    if resume is not None:
        exp_dir, ckpt = resolve_resume(resume)
        check_resume_mode(exp_dir, mode)
        cfg = load_saved_config(os.path.join(exp_dir, "total_config.json"))
        cfg.exp_name = exp_dir
        check_cuda(cfg)
        return cfg, ckpt
    if input_cfg is None:
        raise ConfigError("give a config ([main_config, create_config] or a config file) or resume=")
    main, create = read_config(input_cfg) if isinstance(input_cfg, str) else input_cfg
    cfg = compile_config(copy.deepcopy(main), create_cfg=copy.deepcopy(create), seed=seed, exp_name=exp_name,
                         save_cfg=False)
    check_cuda(cfg)
    return cfg, None


def serial_pipeline(
    input_cfg: Optional[ConfigInput],
    seed: int = 0,
    model: Optional[torch.nn.Module] = None,
    max_train_iter: Optional[int] = None,
    max_env_step: Optional[int] = None,
    exp_name: Optional[str] = None,
    resume: Optional[str] = None,
    progress: bool = True,
    on_eval: Optional[Callable[[Dict[str, object]], None]] = None,
    callbacks: Optional[Sequence[Callback]] = None,
) -> Policy:
    """Train an algorithm (off- or on-policy, as ``policy.on_policy`` says); returns the policy,
    with the run's summary in ``policy.result``.

    Args:
        input_cfg: ``[main_config, create_config]`` or the path of a config ``.py`` file.
        seed: seeds every RNG (envs get their own streams derived from it).
        model: use this model instead of the policy's default.
        max_train_iter / max_env_step: stop after this many train iterations / env steps (a resumed
            run keeps the limits it was started with unless given again).
        exp_name: experiment folder (overrides ``main_config['exp_name']``).
        resume: an experiment folder or checkpoint to continue from. A run that already ended
            (stop value reached, or its limits) is not trained again: the policy of its latest
            checkpoint comes back with ``result['already_finished']`` set.
        progress: a bar on a terminal; progress lines every 10 s where stdout is not one.
        on_eval: called after each evaluation with the row ``progress.csv`` gets (env step, returns,
            train CPU-seconds...); an exception it raises ends the run (envs closed, nothing
            half-written) and propagates -- how ``stride -m tune`` prunes a trial. (A shorthand of
            a :class:`~stride.entry.run.RunCallback`'s ``on_eval``.)
        callbacks: :class:`~stride.entry.run.RunCallback` objects (called after each collect, train
            step and evaluation; one may stop the run cleanly) and learner hooks
            (:class:`~stride.worker.LearnerHook`, registered on the run's learner).
    """
    import_components()
    cfg, resume_ckpt = load_cfg(input_cfg, seed, exp_name, resume)
    if cfg.policy.get("offline"):  # a policy that learns from a dataset alone (BC)
        raise ConfigError(f"policy '{cfg.policy.type}' learns from a dataset alone (policy.offline=True): "
                          "use serial_pipeline_offline (stride -m offline)")
    replicas = bool(cfg.policy.learn.multi_gpu)
    if replicas and resume_ckpt is not None:
        raise ConfigError("resume= with policy.learn.multi_gpu=True is not supported: every replica would restart "
                          "rank 0's envs and buffer; start a new run, or resume with --set policy.learn.multi_gpu=False")
    own_group = _join_replicas(cfg) if replicas else False
    ended = False
    try:
        main = get_rank() == 0
        if not main:  # its own envs, exploration and replay sampling; rank 0 keeps the user's seed
            cfg.seed = cfg.seed + get_rank()
        with Run(cfg, SERIAL, max_env_step=max_env_step, max_train_iter=max_train_iter, resume_ckpt=resume_ckpt,
                 progress=progress and main, callbacks=with_on_eval(callbacks, on_eval), writes=main) as run:
            done = run.already_finished()
            policy = finished_policy(cfg, model, resume_ckpt, done) if resume_ckpt is not None and done is not None \
                else _train(run, model, replicas)
        ended = True
        return policy
    finally:
        if own_group:
            dist_finalize(together=ended)


#: how long a replica may wait in a collective: the others wait while rank 0 evaluates (a 100-episode
#: confirmation on Atari can take an hour on CPU); a replica that dies is ended by torchrun, not by this
REPLICA_TIMEOUT_S = 4 * 3600.0


def _join_replicas(cfg: Config) -> bool:
    """Join the learner replicas' process group (torchrun's environment) unless the caller already
    did; returns whether it was created here (and so is destroyed here)."""
    if in_process_group():
        return False
    try:
        return dist_init(backend="nccl" if cfg.policy.cuda and torch.cuda.is_available() else "gloo",
                         timeout_s=REPLICA_TIMEOUT_S)
    except ConfigError as e:
        raise ConfigError(f"policy.learn.multi_gpu=True: {e}") from None


def _train(run: Run, model: Optional[torch.nn.Module], replicas: bool) -> Policy:
    """One run (or one replica's share of it: see the module docstring)."""
    cfg = run.cfg
    collector_env, evaluator_env = build_env_managers(cfg, cfg.seed)
    check_spaces(cfg, collector_env)  # fail before anything is written
    policy = build_policy(cfg, model)
    run.open()
    goal_env = _reward_model_env(cfg)
    try:
        workers = _build_workers(cfg, policy, collector_env, evaluator_env, run, goal_env)
        learner = workers.learner
        run.register_state("clock", run.record)  # a resumed run's CPU / wall seconds go on from the checkpoint's
        run.start(learner)
        if run.resume_ckpt is not None:
            workers.collector.envstep = learner.envstep
        result = _run(cfg, policy, workers, run, any_rank if replicas else _alone)
        learner.call_hook("after_run")
        return_best(policy, workers.evaluator, result)
    finally:
        collector_env.close()
        evaluator_env.close()
        if goal_env is not None:
            goal_env.close()
    policy.result = run.finish(result, learner.train_iter, replicas=get_world_size() if replicas else 1)
    return policy


def _alone(flag: bool) -> bool:
    """A single learner's stop decision is its own."""
    return flag


class Workers(NamedTuple):
    """The components one serial run wires together."""

    learner: BaseLearner
    collector: SerialCollectorBase
    evaluator: BaseSerialEvaluator
    buffer: Optional[Any]  # None for on-policy policies
    reward_model: Optional[BaseRewardModel] = None  # the config's reward_model section, if any


def _reward_model_env(cfg: Config) -> Optional[BaseEnv]:
    """An env of the run's kind (never stepped) for the reward model's use of the env's own
    functions (HER's ``compute_reward``); None without a reward model."""
    if cfg.get("reward_model") is None:
        return None
    env = ENV_REGISTRY.get(cfg.env.type)(cfg=env_kwargs(cfg.env))
    if not isinstance(env, BaseEnv):
        raise TypeError(f"env '{cfg.env.type}' built a {type(env).__name__}, not a BaseEnv")
    return env


def build_learner_evaluator(cfg: Config, policy: Policy, evaluator_env: EnvManager, tb: Optional[ScalarWriter],
                            exp: Optional[str]) -> Tuple[BaseLearner, BaseSerialEvaluator]:
    """The learner (hooks, checkpoints in ``exp``) and the evaluator (on ``evaluator_env``) of a
    run, as every serial entry (online and offline) builds them."""
    learner = BaseLearner(cfg.policy.learn.learner, policy.learn_mode, tb, exp)
    evaluator = BaseSerialEvaluator(cfg.policy.eval.evaluator, evaluator_env, policy.eval_mode, tb, exp)
    return learner, evaluator


def _build_workers(cfg: Config, policy: Policy, collector_env: EnvManager, evaluator_env: EnvManager, run: Run,
                   goal_env: Optional[BaseEnv] = None) -> Workers:
    """Learner, collector, evaluator, (off-policy) replay buffer and (if configured) reward model;
    their states go into the run's checkpoints (none without ``run.exp``: a replica other than rank 0
    writes no file)."""
    tb, exp = run.tb, run.exp
    learner, evaluator = build_learner_evaluator(cfg, policy, evaluator_env, tb, exp)
    collector = create_collector(cfg.policy.collect.collector, collector_env, policy.collect_mode,
                                 tb_logger=tb, exp_name=exp, sample_transforms=sample_transforms(cfg))
    buffer = None if cfg.policy.on_policy else create_buffer(cfg.policy.other.replay_buffer, seed=cfg.seed,
                                                             tb_logger=tb, exp_name=exp)
    if buffer is not None and cfg.policy.collect.get("data_path"):  # demonstrations beside the agent's data (SQIL, R2D3)
        buffer = with_demonstrations(cfg, policy, buffer, getattr(collector_env, "observation_space", None),
                                     collector_env.action_space, tb, exp)
    reward_model = None if cfg.get("reward_model") is None else \
        create_reward_model(cfg.reward_model, env=goal_env, seed=cfg.seed)
    for name, comp in (("collector", collector), ("buffer", buffer), ("evaluator", evaluator),
                       ("reward_model", reward_model)):
        run.register_state(name, comp)
    return Workers(learner, collector, evaluator, buffer, reward_model)


def finished_policy(cfg: Config, model: Optional[torch.nn.Module], ckpt: str, result: Mapping[str, object]) -> Policy:
    """The policy of a run that already ended, as it returned it (its latest checkpoint, or its best
    evaluation's with ``return_best``); nothing is trained or written (its ``result.json`` stays as it is)."""
    policy = build_policy(cfg, model)
    best = result.get("best_eval")
    if result.get("returned") == "best" and isinstance(best, Mapping) and isinstance(best.get("checkpoint"), str):
        ckpt = str(best["checkpoint"])  # it returned its best evaluation's policy (return_best)
    load_policy(policy, ckpt)
    policy.result = dict(result, already_finished=True)
    return policy


def _samples(data: Sequence[object]) -> List[Mapping[str, object]]:
    """A collect's output as the learner's batch: training samples (dicts), checked to be."""
    samples = [d for d in data if isinstance(d, Mapping)]
    if len(samples) != len(data):
        raise ConfigError("an on-policy learner trains on samples (dicts): use the sample collector")
    return samples


class SampleSink(Protocol):
    """What :func:`random_collect` fills: a replay buffer takes a list of transition dicts (the
    episode buffer: of episodes, each a list of them)."""

    def push(self, data: Sequence[object], cur_collector_envstep: int = -1) -> object:
        """Add the transitions (episodes), collected up to env step ``cur_collector_envstep``."""


class WarmUp:
    """The random warm-up of an off-policy run: its first ``policy.random_collect_size`` env steps
    are uniformly random actions (:func:`~stride.policy.random_policy.random_collect_mode`) pushed
    to the replay buffer, before any training.

    It is taken one collect at a time (``policy.collect.n_sample`` samples; an episode collector:
    one episode) inside the run's loop, the one phase the serial and league loops share: the
    env-step limit bounds it like any collect (passed by less than one collect; a limit below the
    warm-up ends the run inside it, which :meth:`note` says) and a signal stops it at the next
    collect with a checkpoint, as in training. Each collect's actions are drawn from a generator
    seeded by the run's seed and the env step it starts at, so a run resumed inside the warm-up
    takes the same actions as an uninterrupted one."""

    def __init__(self, cfg: Config, policy: Policy, collector: SerialCollectorBase, buffer: Optional[SampleSink],
                 learner: Optional[BaseLearner] = None) -> None:
        self.size = int(cfg.policy.random_collect_size)
        if self.size and not isinstance(collector, (SampleCollector, EpisodeCollector)):
            raise ConfigError(f"policy.random_collect_size={self.size} needs a sample or episode collector "
                              f"(collector type 'sample' or 'episode'), not {type(collector).__name__}")
        self.cfg, self.policy, self.collector, self.buffer, self.learner = cfg, policy, collector, buffer, learner
        # on-policy runs (no buffer) take none; a run that trained is past its warm-up
        self.end = self.size if buffer is not None and (learner is None or learner.train_iter == 0) else 0
        n_sample = (cfg.policy.get("collect") or {}).get("n_sample")
        #: one collect of the run: its n_sample samples (None: an episode collector's one episode)
        self.n_sample: Optional[int] = int(n_sample) if isinstance(collector, SampleCollector) and n_sample else None

    def pending(self) -> bool:
        """Whether random env steps are still to be taken."""
        return self.collector.envstep < self.end

    def collect(self) -> None:
        """One collect of random actions into the buffer: ``n_sample`` samples (fewer where the
        warm-up has fewer left), or one episode; nothing once done. Like any collect it may pass
        the env-step limit (by less than one collect); it is not cut short there, so a run
        stopped by a limit inside its warm-up and resumed with a larger one equals one that never
        stopped."""
        collector, buffer = self.collector, self.buffer
        if not self.pending() or buffer is None:
            return
        seed = np.random.SeedSequence([int(self.cfg.seed), collector.envstep]).generate_state(1)[0]
        left = self.end - collector.envstep
        n_sample = max(1, int(min(left, self.n_sample or left))) if isinstance(collector, SampleCollector) else None
        data = collect_at_random(collector, self.policy.collect_mode, int(seed), n_sample)
        buffer.push(data, cur_collector_envstep=collector.envstep)
        if self.learner is not None:  # its checkpoint's env step (what a resumed collector goes on from)
            self.learner.collector_envstep = collector.envstep

    def note(self, max_env_step: Optional[int]) -> Optional[str]:
        """The line to print when ``max_env_step`` ends the run before it trains: inside the
        warm-up, or within its first collect of the policy (on-policy: ``n_sample`` env steps at
        once); None otherwise."""
        envstep = self.collector.envstep
        if max_env_step is None or envstep >= max_env_step:
            return None
        if self.pending() and max_env_step <= self.end:
            return (f"stride: note: the env-step limit {max_env_step} does not go past the random warm-up of "
                    f"{self.size} env steps (policy.random_collect_size): the run stops at the limit before "
                    "any training; give a larger --env-step (or lower policy.random_collect_size) to train")
        if not self.pending() and self.n_sample and max_env_step - envstep < self.n_sample:
            return (f"stride: note: the env-step limit {max_env_step} is less than one collect away "
                    f"(policy.collect.n_sample={self.n_sample}): the run takes that collect and stops, up to "
                    f"{envstep + self.n_sample} env steps (a limit is passed by at most one collect)")
        return None


def random_collect(cfg: Config, policy: Policy, collector: SerialCollectorBase, buffer: SampleSink) -> None:
    """The whole random warm-up at once (:class:`WarmUp`): ``policy.random_collect_size`` env
    steps of uniformly random actions into the buffer (an episode collector: whole episodes)."""
    warm = WarmUp(cfg, policy, collector, buffer)
    while warm.pending():
        warm.collect()


def _run(cfg: Config, policy: Policy, workers: Workers, run: Run, agree: Callable[[bool], bool]) -> Dict[str, object]:
    """The loop. ``agree(flag)`` turns one process's wish to stop into every replica's decision
    (the identity for a single learner); only the process with ``run.exp`` evaluates and writes."""
    learner, collector, evaluator, buffer = workers.learner, workers.collector, workers.evaluator, workers.buffer
    exp, record = run.exp, run.record
    train_limit = math.inf if run.max_train_iter is None else run.max_train_iter
    env_step_limit = math.inf if run.max_env_step is None else run.max_env_step
    bar = run.bar(total=env_step_limit, initial=collector.envstep)
    stop = False
    warm = WarmUp(cfg, policy, collector, buffer, learner)
    with run.signals():  # from here a signal stops the run at the next collect, warm-up included
        note = warm.note(run.max_env_step)
        if note is not None and exp is not None:
            print(note, file=sys.stderr, flush=True)
        while True:
            if agree(run.stop_requested):
                run.halt(learner.save_checkpoint)
                break
            if agree(warm.pending()):  # a rank whose warm-up is done waits for the others
                warm.collect()
                run.collected(collector.envstep, learner.train_iter)
                bar.update(collector.envstep, learner.train_iter, record.last_return)
                if agree(collector.envstep >= env_step_limit):
                    break
                continue
            if exp is not None and evaluator.should_eval(learner.train_iter, collector.envstep):
                stop = run.evaluate(evaluator, learner, collector.envstep)
                bar.update(collector.envstep, learner.train_iter, record.last_return)
            if agree(stop):
                stop = True
                break
            if agree(run.signalled()):  # a signal cut the evaluation short: the loop's top saves and stops
                continue
            _collect_and_train(cfg, policy, workers, run, agree, train_limit)
            bar.update(collector.envstep, learner.train_iter, record.last_return)
            if agree(collector.envstep >= env_step_limit or learner.train_iter >= train_limit):
                break
    bar.close()
    return {
        "stop": bool(stop), **run.outcome(),
        "env_step": collector.envstep, "train_iter": learner.train_iter, **record.summary(), "exp_dir": exp,
    }


def _collect_and_train(cfg: Config, policy: Policy, workers: Workers, run: Run, agree: Callable[[bool], bool],
                       train_limit: float) -> None:
    """One collect of the policy, then the learner's steps on it: on-policy, one step on the fresh
    samples; off-policy, the samples pushed to the replay and up to ``update_per_collect`` steps on
    its batches (fewer at the train-iteration limit or while it has too few rows). A reward model
    learns from the collect first, relabels each batch, and is cleared every
    ``reward_model.clear_buffer_per_iters`` train iterations."""
    learner, collector, buffer, reward_model = workers.learner, workers.collector, workers.buffer, workers.reward_model
    learn = cfg.policy.learn
    kwargs = policy.collect_mode.collect_kwargs(collector.envstep, learner.train_iter)
    new_data = collector.collect(train_iter=learner.train_iter, policy_kwargs=kwargs)
    run.collected(collector.envstep, learner.train_iter)
    if reward_model is not None:
        reward_model.collect_data(new_data)
        reward_model.train()
    iter_before = learner.train_iter
    if buffer is None:  # on-policy: the fresh samples are the batch
        batch = _samples(new_data)
        log = learner.train(batch if reward_model is None else reward_model.estimate(batch), collector.envstep)
        run.trained(learner.train_iter, log)
    else:
        use_priority = bool(cfg.policy.priority)
        buffer.push(new_data, cur_collector_envstep=collector.envstep)
        items = learn.batch_size if reward_model is None else reward_model.batch_items(learn.batch_size)
        for _ in range(learn.update_per_collect):
            sampled = buffer.sample_batch(items, learner.train_iter)
            if agree(sampled is None) or learner.train_iter >= train_limit:
                break
            batch, ticket = sampled
            log = learner.train(batch if reward_model is None else reward_model.estimate(batch), collector.envstep)
            if use_priority:
                buffer.update(ticket, learner.priority)
            run.trained(learner.train_iter, log)
    # every clear_every train iterations (derived from train_iter: a resumed run clears alike)
    clear_every = int(cfg.reward_model.clear_buffer_per_iters) if reward_model is not None else 0
    if reward_model is not None and clear_every and learner.train_iter // clear_every > iter_before // clear_every:
        reward_model.clear_data()
