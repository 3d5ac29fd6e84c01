"""``serial_pipeline_onpolicy``: collect -> learn -> evaluate, no replay buffer.

Each iteration collects ``policy.collect.n_sample`` fresh samples with the policy's collect mode
and hands all of them to one ``learner.train`` call: the policy makes as many gradient steps on
them as it likes (PPO: ``epoch_per_collect`` epochs of minibatches; A2C: one) and returns the
averaged scalars. So one ``train_iter`` is one collect, and ``eval_freq`` / ``--train-iter`` /
checkpoint frequencies count collects. The experiment folder, ``result.json``, ``progress.csv``,
Ctrl-C checkpoint and ``resume=`` behave exactly as in ``serial_pipeline`` (the collector's
partial trajectories and in-flight episodes are in the checkpoint, so a resumed run matches an
uninterrupted one). The loop body names no algorithm.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Optional, Union

import torch

from ..config import Config, save_config
from ..config.compile import import_components, make_exp_dir
from ..utils.log import ProgressCSV, build_tb_writer
from ..utils.registry import POLICY_REGISTRY
from ..utils.seed import set_pkg_seed
from ..worker import BaseLearner, BaseSerialEvaluator, create_collector
from .progress import ProgressBar
from .serial_entry import _load_cfg
from .utils import Interrupt, build_env_managers, check_spaces


def serial_pipeline_onpolicy(
    input_cfg: Union[str, tuple, list],
    seed: int = 0,
    model: Optional[torch.nn.Module] = None,
    max_train_iter: Optional[int] = None,
    max_env_step: Optional[int] = None,
    exp_name: Optional[str] = None,
    resume: Optional[str] = None,
    progress: bool = True,
) -> Any:
    """Train an on-policy algorithm (PPO, A2C...); returns the policy (``policy.result`` holds the summary).

    Args:
        input_cfg: ``[main_config, create_config]`` or the path of a config ``.py`` file.
        seed: seeds every RNG (envs get their own streams derived from it).
        model: use this model instead of the policy's default.
        max_train_iter / max_env_step: stop after this many collects (train iterations) / env steps.
        exp_name: experiment folder (overrides ``main_config['exp_name']``).
        resume: an experiment folder or checkpoint to continue from.
        progress: show a progress bar on the terminal.

    Examples:
        >>> from stride.zoo.cartpole.config.cartpole_ppo_config import main_config, create_config
        >>> policy = serial_pipeline_onpolicy([main_config, create_config], seed=0)  # doctest: +SKIP
    """
    import_components()
    cfg, resume_ckpt = _load_cfg(input_cfg, seed, exp_name, resume)
    seed = cfg.seed
    torch.set_num_threads(int(cfg.get("num_threads", 1)))
    set_pkg_seed(seed, use_cuda=cfg.policy.cuda)
    collector_env, evaluator_env = build_env_managers(cfg, seed)
    check_spaces(cfg, collector_env)  # fail before anything is written
    policy = POLICY_REGISTRY.get(cfg.policy.type)(cfg.policy, model=model)
    if resume_ckpt is None:
        cfg.exp_name = make_exp_dir(cfg.exp_name)
        save_config(cfg, cfg.exp_name)
    exp = cfg.exp_name
    tb = build_tb_writer(exp)
    try:
        learner = BaseLearner(cfg.policy.learn.learner, policy.learn_mode, tb, exp)
        collector = create_collector(cfg.policy.collect.collector, collector_env, policy.collect_mode,
                                     tb_logger=tb, exp_name=exp)
        evaluator = BaseSerialEvaluator(cfg.policy.eval.evaluator, evaluator_env, policy.eval_mode, tb, exp)
        for name, comp in (("collector", collector), ("evaluator", evaluator)):
            learner.register_state(name, comp)
        learner.call_hook("before_run")
        if resume_ckpt is not None:
            learner.load_checkpoint(resume_ckpt)
            collector.envstep = learner.envstep
        result = _run(cfg, policy, learner, collector, evaluator, exp, max_train_iter, max_env_step, progress)
        learner.call_hook("after_run")
    finally:
        collector_env.close()
        evaluator_env.close()
        if tb is not None:
            tb.close()
    result["final_checkpoint"] = os.path.join(exp, "ckpt", f"iteration_{learner.train_iter}.pth.tar")
    tmp = os.path.join(exp, "result.json.tmp")
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
    os.replace(tmp, os.path.join(exp, "result.json"))
    policy.result = result
    return policy


def _run(cfg: Config, policy: Any, learner: BaseLearner, collector: Any, evaluator: BaseSerialEvaluator, exp: str,
         max_train_iter: Optional[int], max_env_step: Optional[int], progress: bool) -> dict:
    max_train_iter = float("inf") if max_train_iter is None else max_train_iter
    max_env_step = float("inf") if max_env_step is None else max_env_step
    csv = ProgressCSV(os.path.join(exp, "progress.csv"))
    bar = ProgressBar(enabled=progress, total=max_env_step, initial=collector.envstep)
    cpu0, wall0, eval_cpu = time.process_time(), time.perf_counter(), 0.0
    stop, interrupted, last_return = False, False, None
    with Interrupt() as interrupt:
        while True:
            if interrupt.requested:
                interrupted = True
                learner.save_checkpoint()
                break
            if evaluator.should_eval(learner.train_iter):
                stop, returns = evaluator.eval(learner.save_checkpoint, learner.train_iter, collector.envstep)
                eval_cpu += evaluator.last_eval_cpu_seconds
                last_return = evaluator.last_eval_return
                train_cpu = time.process_time() - cpu0 - eval_cpu
                csv.write({"train_iter": learner.train_iter, "envstep": collector.envstep,
                           "eval_return_mean": last_return, "eval_return_min": min(returns),
                           "eval_return_max": max(returns), "train_cpu_seconds": round(train_cpu, 3),
                           "wall_seconds": round(time.perf_counter() - wall0, 3),
                           **{f"learner_{k}": v for k, v in learner.last_log.items()}})
                bar.update(collector.envstep, learner.train_iter, last_return)
                if stop:
                    break
            kwargs = policy.collect_mode.collect_kwargs(collector.envstep, learner.train_iter)
            new_data = collector.collect(train_iter=learner.train_iter, policy_kwargs=kwargs)
            learner.train(new_data, collector.envstep)
            bar.update(collector.envstep, learner.train_iter, last_return)
            if collector.envstep >= max_env_step or learner.train_iter >= max_train_iter:
                break
    bar.close()
    return {
        "stop": bool(stop), "interrupted": interrupted, "env_step": collector.envstep, "train_iter": learner.train_iter,
        "eval_return": last_return, "train_cpu_seconds": time.process_time() - cpu0 - eval_cpu,
        "eval_cpu_seconds": eval_cpu, "wall_seconds": time.perf_counter() - wall0, "exp_dir": exp,
    }
