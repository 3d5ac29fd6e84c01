"""Case 2, RLlib 2.60's IMPALA on CartPole-v1 (runs in ``benchmarks/.venv-rllib``), one seed.

    python parallel/rllib_impala.py --seed 0 --max-env-steps 500000 --budget-s 1800 --out OUT.json

RLlib's tuned CartPole IMPALA settings (``rllib/tuned_examples/impala/cartpole_impala.py``: train
batch 500 per learner, global-norm clip 40, lr 5e-4, vf coefficient 0.05, no entropy bonus, shared
value layers) on Stride's layout: 2 env runners of 4 envs each, the learner in the driver
(``num_learners=0``), a local Ray instance of 2 CPUs.

Same stop rule as Stride's config: whenever the sampled env steps pass another multiple of 1,000
(checked after each ``train()``), 10 deterministic episodes (``bench_common/evaluate.py``); a mean
>= 475 is confirmed on 100 more. Train CPU: the driver's process CPU from just before
``config.build()`` plus every remote env runner's process CPU (their start-up included), minus the
CPU of those evaluations; Ray's daemons are not counted, nor ``ray.init`` (``ray_start_seconds``,
wall). Stops at the confirmed 475, ``--max-env-steps`` or ``--budget-s`` wall seconds of training,
and reports where it got. Afterwards 100 fresh episodes, as for Stride.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from typing import List

import numpy as np

from bench_common.evaluate import evaluate_batched
from bench_common.proc import cpu, emit, log, setup_process

STOP, EVERY, SCREEN, CONFIRM = 475.0, 1000, 10, 100


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-env-steps", type=int, default=500_000)
    ap.add_argument("--budget-s", type=float, default=1800.0, help="wall seconds of training at most")
    ap.add_argument("--fresh-episodes", type=int, default=100)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)
    import ray
    import torch
    from ray.rllib.algorithms.impala import IMPALAConfig
    from ray.rllib.core import DEFAULT_MODULE_ID
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    t0 = time.perf_counter()
    context = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    session_dir = context.address_info.get("session_dir")  # Ray's files of this instance, removed at the end
    ray_start = time.perf_counter() - t0
    config = (IMPALAConfig()
              .environment("CartPole-v1")
              .env_runners(num_env_runners=2, num_envs_per_env_runner=4)
              .learners(num_learners=0)
              .training(train_batch_size_per_learner=500, grad_clip=40.0, grad_clip_by="global_norm", lr=5e-4,
                        vf_loss_coeff=0.05, entropy_coeff=0.0)
              .rl_module(model_config=DefaultModelConfig(vf_share_layers=True))
              # IMPALA's default 10 s per train() meant ~8k env steps between checks; 1,000, as Stride's
              .reporting(min_time_s_per_iteration=0, min_sample_timesteps_per_iteration=EVERY)
              .debugging(seed=args.seed))
    c0, w0 = cpu(), time.perf_counter()
    algo = config.build_algo()
    module = algo.get_module()

    def sync() -> None:
        # the learner's weights into the driver's module: IMPALA ships weights to the remote env runners
        # through its state server only, so the local env runner's module (what ``get_module`` returns)
        # keeps its initial weights -- evaluating it unsynced scored a constant action (~9) at 535k steps
        module.set_state(algo.learner_group.get_weights()[DEFAULT_MODULE_ID])

    def act(batch: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = module.forward_inference({"obs": torch.from_numpy(batch)})["action_dist_inputs"]
        return logits.argmax(-1).numpy()

    eval_cpu, steps, mark, reached, history = 0.0, 0, 0, False, []
    screen: List[float] = []
    while steps < args.max_env_steps and time.perf_counter() - w0 < args.budget_s:
        result = algo.train()
        runners = result.get("env_runners", {})
        steps = int(runners.get("num_env_steps_sampled_lifetime", result.get("num_env_steps_sampled_lifetime", 0)))
        if steps // EVERY <= mark:
            continue
        mark = steps // EVERY
        e0 = cpu()
        sync()
        screen = evaluate_batched(act, SCREEN, 8, 10_000 * mark + args.seed)
        confirm = evaluate_batched(act, CONFIRM, 8, 20_000_000 + 10_000 * mark + args.seed) if np.mean(screen) >= STOP else None
        eval_cpu += cpu() - e0
        history.append((steps, float(np.mean(screen)), None if confirm is None else float(np.mean(confirm))))
        log(f"[rllib] env_steps={steps} screen={np.mean(screen):.1f} confirm={history[-1][2]} "
            f"sampled_return={runners.get('episode_return_mean')}")
        if confirm is not None and np.mean(confirm) >= STOP:
            reached = True
            break
    wall = time.perf_counter() - w0
    runner_cpu = sum(algo.env_runner_group.foreach_env_runner(lambda r: time.process_time(), local_env_runner=False))
    train_cpu = cpu() - c0 - eval_cpu + runner_cpu
    sync()
    fresh = evaluate_batched(act, args.fresh_episodes, 8, 30_000 + args.seed) if args.fresh_episodes else []
    algo.stop()
    ray.shutdown()
    if session_dir and os.path.isdir(session_dir):
        latest = os.path.join(os.path.dirname(session_dir), "session_latest")
        if os.path.islink(latest) and os.path.realpath(latest) == os.path.realpath(session_dir):
            os.remove(latest)
        shutil.rmtree(session_dir, ignore_errors=True)
    emit({"contestant": "rllib", "seed": args.seed, "reached": reached, "env_steps": steps,
          "train_cpu_seconds": train_cpu, "eval_cpu_seconds": eval_cpu, "ray_start_seconds": ray_start,
          "wall_seconds": wall, "best_screen": max((h[1] for h in history), default=None),
          "last_eval_return": history[-1][1] if history else None, "history": history, "fresh_returns": fresh,
          "budget_s": args.budget_s, "max_env_steps": args.max_env_steps, **info}, args.out)


if __name__ == "__main__":
    main()
