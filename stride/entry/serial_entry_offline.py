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
learner, evaluator, progress CSV, result file and Ctrl-C checkpoint are the serial entry's own
(:func:`~stride.entry.serial_entry.build_learner_evaluator`, :class:`EvalRecorder`,
:func:`finish_run`, :class:`Interrupt`); the replay buffer and evaluator states are in the
checkpoints, so ``resume=`` continues exactly. Nothing here knows an algorithm: BC now, the
offline algorithms to come (CQL, TD3+BC, IQL) only add a policy.

Better than DI-engine on purpose: its ``serial_pipeline_offline`` reads its own dataset classes
(pickles of transition dicts, or HDF5 in its own layout) in a torch ``DataLoader`` loop apart from
the serial one, stops on one evaluation, and ``serial_pipeline_bc`` is yet another loop. Here one
reader of a standard format, the serial entry's learner and evaluator (a screen confirmed over
100 episodes), and exact resume.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional

import torch

from ..config import Config, save_config
from ..config.compile import keep_exp_dirs, make_exp_dir, provisional_exp_dirs
from ..data import create_buffer
from ..data.demo import DemoDataset
from ..policy.base_policy import Policy
from ..utils.errors import ConfigError
from ..utils.log import build_tb_writer
from ..utils.registry import import_components
from ..utils.seed import set_pkg_seed
from ..worker import BaseLearner, BaseSerialEvaluator
from ..worker.protocols import EnvManager
from .progress import ProgressBar
from .run_state import OFFLINE, record_run
from .serial_entry import EvalRecorder, build_learner_evaluator, finish_run, finished_policy, load_cfg, resumed_limits
from .demonstrations import dataset_samples, read_dataset
from .utils import ConfigInput, Interrupt, build_env_manager, build_policy, check_spaces


@provisional_exp_dirs()  # a run that fails before its loop starts (a bad dataset) leaves no folder
def serial_pipeline_offline(
    input_cfg: Optional[ConfigInput],
    seed: int = 0,
    max_train_iter: Optional[int] = None,
    model: Optional[torch.nn.Module] = None,
    exp_name: Optional[str] = None,
    resume: Optional[str] = None,
    progress: bool = True,
) -> Policy:
    """Train the config's policy on the dataset at ``policy.collect.data_path`` until the evaluator's
    confirmed stop value or ``max_train_iter``; returns the policy (``policy.result``: the summary).

    Args: as :func:`stride.entry.serial_pipeline` (there are no env steps to limit).

    Examples:
        >>> from stride.zoo.cartpole.config.cartpole_bc_config import main_config, create_config
        >>> policy = serial_pipeline_offline([main_config, create_config], seed=0)  # doctest: +SKIP
    """
    import_components()
    cfg, resume_ckpt = load_cfg(input_cfg, seed, exp_name, resume, mode=OFFLINE)
    if resume_ckpt is not None:
        limits = resumed_limits(cfg.exp_name, None, max_train_iter)
        if isinstance(limits, dict):  # the run already ended: its result
            return finished_policy(cfg, model, resume_ckpt, limits)
        max_train_iter = limits[1]
    if cfg.policy.eval.evaluator.eval_freq_envstep:
        raise ConfigError(f"policy.eval.evaluator.eval_freq_envstep={cfg.policy.eval.evaluator.eval_freq_envstep} "
                          "counts env steps, which an offline run never takes: set it to 0 and use eval_freq "
                          "(train iterations)")
    if cfg.policy.on_policy:
        raise ConfigError(f"policy '{cfg.policy.type}' is on-policy: the offline entry trains from a replay of the "
                          "dataset (use an off-policy or offline policy, e.g. 'bc')")
    torch.set_num_threads(int(cfg.get("num_threads", 1)))
    set_pkg_seed(cfg.seed, use_cuda=cfg.policy.cuda)
    evaluator_env = build_env_manager(cfg, cfg.seed, evaluator=True)
    try:
        check_spaces(cfg, evaluator_env)
        dataset = read_dataset(cfg, evaluator_env.observation_space, evaluator_env.action_space)
        policy = build_policy(cfg, model)
        return _train(cfg, policy, dataset, evaluator_env, resume_ckpt, max_train_iter, progress)
    finally:
        evaluator_env.close()


def _train(cfg: Config, policy: Policy, dataset: DemoDataset, evaluator_env: EnvManager, resume_ckpt: Optional[str],
           max_train_iter: Optional[int], progress: bool) -> Policy:
    if resume_ckpt is None:
        cfg.exp_name = make_exp_dir(cfg.exp_name)
        save_config(cfg, cfg.exp_name)
        record_run(cfg.exp_name, OFFLINE, None, max_train_iter)
    exp = cfg.exp_name
    tb = build_tb_writer(exp)
    try:
        learner, evaluator = build_learner_evaluator(cfg, policy, evaluator_env, tb, exp)
        buffer = create_buffer(cfg.policy.other.replay_buffer, seed=cfg.seed, tb_logger=tb, exp_name=exp)
        record = EvalRecorder(exp)
        for name, comp in (("buffer", buffer), ("evaluator", evaluator), ("clock", record)):
            learner.register_state(name, comp)
        learner.call_hook("before_run")
        if resume_ckpt is not None:
            learner.load_checkpoint(resume_ckpt)  # the buffer comes back with the checkpoint
        else:
            samples = dataset_samples(dataset, policy.collect_mode)
            buffer.push(samples)
            if buffer.count() < len(samples):
                raise ConfigError(f"policy.other.replay_buffer.replay_buffer_size="
                                  f"{cfg.policy.other.replay_buffer.replay_buffer_size} is smaller than the "
                                  f"dataset's {len(samples)} samples: raise it to at least {len(samples)}")
        keep_exp_dirs()  # built: the folder is the run's from here on
        result = _run(cfg, learner, evaluator, buffer, record, exp, max_train_iter, progress)
        learner.call_hook("after_run")
    finally:
        if tb is not None:
            tb.close()
    result["dataset"] = {"path": dataset.path, "episodes": len(dataset.lengths), "transitions": len(dataset),
                         "return_mean": float(dataset.returns.mean())}
    return finish_run(policy, result, learner, exp, None, max_train_iter)


def _run(cfg: Config, learner: BaseLearner, evaluator: BaseSerialEvaluator, buffer: Any, record: EvalRecorder, exp: str,
         max_train_iter: Optional[int], progress: bool) -> Dict[str, Any]:
    """The loop: evaluate when due, else one gradient step on a sampled batch."""
    limit = math.inf if max_train_iter is None else max_train_iter
    batch_size, use_priority = int(cfg.policy.learn.batch_size), bool(cfg.policy.priority)
    bar = ProgressBar(enabled=progress, total=limit, initial=learner.train_iter, unit="train iters")
    stop, interrupted = False, False
    with Interrupt() as interrupt:
        while True:
            if interrupt.requested:
                interrupted = True
                learner.save_checkpoint()
                break
            if evaluator.should_eval(learner.train_iter):
                stop, _ = record.evaluate(evaluator, learner, 0)
            if stop or learner.train_iter >= limit:
                break
            batch = buffer.sample_batch(batch_size, learner.train_iter)
            if batch is None:
                raise ConfigError(f"the replay buffer cannot give a batch of policy.learn.batch_size={batch_size} "
                                  f"from the dataset's {buffer.count()} samples: lower the batch size (or the "
                                  "buffer's min_sample_size)")
            learner.train(batch, 0)
            if use_priority:
                buffer.update(learner.priority_info)
            bar.update(learner.train_iter, learner.train_iter, record.last_return)
    bar.close()
    return {"stop": bool(stop), "interrupted": interrupted, "signal": interrupt.signal_name, "env_step": 0,
            "train_iter": learner.train_iter, **record.summary(), "exp_dir": exp}

