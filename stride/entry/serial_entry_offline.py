"""``serial_pipeline_offline``: train from a demonstration dataset, evaluate online; no env is
stepped for training.

The dataset (``policy.collect.data_path``: a Minari dataset folder or local id, read by the one
reader :func:`stride.data.demo.load_demo_dataset` and checked against the config's env) is
replayed, episode by episode, through the policy's own ``collect_mode.process_transition`` and
``get_train_sample`` -- the calls the collector makes on live steps -- into the configured replay
buffer, so every sample holds what the policy would have stored had it collected the data itself
(SAC-style actors get their [-1, 1] actions, n-step policies their n-step targets). Then the loop:
evaluate when due (the evaluator's ``eval_freq`` in train iterations; the 10-episode screen and
the ``confirm_episode`` confirmation, as online), sample ``batch_size``, ``learner.train``. The
learner and evaluator are the serial entry's own (:func:`~stride.entry.serial_entry.build_learner_evaluator`);
the folder, progress CSV, result file, Ctrl-C checkpoint and callbacks the run core's
(:class:`~stride.entry.run.Run`); the replay buffer and evaluator states are in the checkpoints,
so ``resume=`` continues exactly. Nothing here knows an algorithm: BC now, the
offline algorithms to come (CQL, TD3+BC, IQL) only add a policy.

Better than DI-engine on purpose: its ``serial_pipeline_offline`` reads its own dataset classes
(pickles of transition dicts, or HDF5 in its own layout) in a torch ``DataLoader`` loop apart from
the serial one, stops on one evaluation, and ``serial_pipeline_bc`` is yet another loop. Here one
reader of a standard format, the serial entry's learner and evaluator (a screen confirmed over
100 episodes), and exact resume.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Sequence

import torch

from ..config import Config
from ..data import create_buffer
from ..data.demo import DemoDataset
from ..policy.base_policy import Policy
from ..utils.errors import ConfigError
from ..utils.registry import import_components
from ..worker import BaseLearner, BaseSerialEvaluator
from ..worker.protocols import EnvManager
from .run import Callback, Run, return_best
from .run_state import OFFLINE
from .serial_entry import build_learner_evaluator, finished_policy, load_cfg
from .demonstrations import dataset_samples, read_dataset
from .utils import ConfigInput, build_env_manager, build_policy, check_spaces


def serial_pipeline_offline(
    input_cfg: Optional[ConfigInput],
    seed: int = 0,
    max_train_iter: Optional[int] = None,
    model: Optional[torch.nn.Module] = None,
    exp_name: Optional[str] = None,
    resume: Optional[str] = None,
    progress: bool = True,
    callbacks: Optional[Sequence[Callback]] = None,
) -> Policy:
    """Train the config's policy on the dataset at ``policy.collect.data_path`` until the evaluator's
    confirmed stop value or ``max_train_iter``; returns the policy (``policy.result``: the summary).

    Args: as :func:`stride.entry.serial_pipeline` (there are no env steps to limit; ``callbacks``
    get no ``on_collect``).

    Examples:
        >>> from stride.zoo.cartpole.config.cartpole_bc_config import main_config, create_config
        >>> policy = serial_pipeline_offline([main_config, create_config], seed=0)  # doctest: +SKIP
    """
    import_components()
    cfg, resume_ckpt = load_cfg(input_cfg, seed, exp_name, resume, mode=OFFLINE)
    with Run(cfg, OFFLINE, max_train_iter=max_train_iter, resume_ckpt=resume_ckpt, progress=progress,
             callbacks=callbacks) as run:
        done = run.already_finished()
        if resume_ckpt is not None and done is not None:  # the run already ended: its result
            return finished_policy(cfg, model, resume_ckpt, done)
        if cfg.policy.eval.evaluator.eval_freq_envstep:
            raise ConfigError(f"policy.eval.evaluator.eval_freq_envstep={cfg.policy.eval.evaluator.eval_freq_envstep} "
                              "counts env steps, which an offline run never takes: set it to 0 and use eval_freq "
                              "(train iterations)")
        if cfg.policy.on_policy:
            raise ConfigError(f"policy '{cfg.policy.type}' is on-policy: the offline entry trains from a replay of "
                              "the dataset (use an off-policy or offline policy, e.g. 'bc')")
        evaluator_env = build_env_manager(cfg, cfg.seed, evaluator=True)
        try:
            check_spaces(cfg, evaluator_env)
            dataset = read_dataset(cfg, evaluator_env.observation_space, evaluator_env.action_space)
            policy = build_policy(cfg, model)
            return _train(run, policy, dataset, evaluator_env)
        finally:
            evaluator_env.close()


def _train(run: Run, policy: Policy, dataset: DemoDataset, evaluator_env: EnvManager) -> Policy:
    cfg = run.cfg
    exp = run.open()
    learner, evaluator = build_learner_evaluator(cfg, policy, evaluator_env, run.tb, exp)
    buffer = create_buffer(cfg.policy.other.replay_buffer, seed=cfg.seed, tb_logger=run.tb, exp_name=exp)
    for name, comp in (("buffer", buffer), ("evaluator", evaluator), ("clock", run.record)):
        run.register_state(name, comp)
    run.attach(learner)  # a resumed run's buffer comes back with the checkpoint
    if run.resume_ckpt is None:
        samples = dataset_samples(dataset, policy.collect_mode)
        buffer.push(samples)
        if buffer.count() < len(samples):
            raise ConfigError(f"policy.other.replay_buffer.replay_buffer_size="
                              f"{cfg.policy.other.replay_buffer.replay_buffer_size} is smaller than the "
                              f"dataset's {len(samples)} samples: raise it to at least {len(samples)}")
    run.start()
    result = _run(cfg, learner, evaluator, buffer, run)
    learner.call_hook("after_run")
    return_best(policy, evaluator, result)
    result["dataset"] = {"path": dataset.path, "episodes": len(dataset.lengths), "transitions": len(dataset),
                         "return_mean": float(dataset.returns.mean())}
    policy.result = run.finish(result, learner.train_iter)
    return policy


def _run(cfg: Config, learner: BaseLearner, evaluator: BaseSerialEvaluator, buffer: Any, run: Run) -> Dict[str, Any]:
    """The loop: evaluate when due, else one gradient step on a sampled batch."""
    limit = math.inf if run.max_train_iter is None else run.max_train_iter
    batch_size, use_priority = int(cfg.policy.learn.batch_size), bool(cfg.policy.priority)
    bar = run.bar(total=limit, initial=learner.train_iter, unit="train iters")
    stop = False
    with run.signals():
        while True:
            if run.stop_requested:
                run.halt(learner.save_checkpoint)
                break
            if evaluator.should_eval(learner.train_iter):
                stop = run.evaluate(evaluator, learner, 0)
            if stop or learner.train_iter >= limit:
                break
            if run.signalled():  # a signal cut the evaluation short: the loop's top saves and stops
                continue
            sampled = buffer.sample_batch(batch_size, learner.train_iter)
            if sampled is None:
                raise ConfigError(f"the replay buffer cannot give a batch of policy.learn.batch_size={batch_size} "
                                  f"from the dataset's {buffer.count()} samples: lower the batch size (or the "
                                  "buffer's min_sample_size)")
            batch, ticket = sampled
            log = learner.train(batch, 0)
            if use_priority:
                buffer.update(ticket, learner.priority)
            run.trained(learner.train_iter, log)
            bar.update(learner.train_iter, learner.train_iter, run.record.last_return)
    bar.close()
    return {"stop": bool(stop), **run.outcome(), "env_step": 0,
            "train_iter": learner.train_iter, **run.record.summary(), "exp_dir": run.exp}
