"""Case 2, Stride: ``parallel_pipeline`` (what ``stride -m parallel`` runs) with the zoo's parallel
IMPALA CartPole config (2 collector actors of 4 envs, learner, replay), one seed, to a confirmed 475.

    python parallel/stride_impala.py --seed 0 --max-env-steps 500000 --exp-dir DIR --out OUT.json

Stop rule: the config's own (10 evaluation episodes every 1,000 env steps; a mean >= 475 is
confirmed on 100 more). ``train_cpu_seconds`` is the pipeline's: every actor's process CPU (learner,
replay, collectors, their start-up included) plus the driver's CPU from the start of its loop, minus
the CPU of its evaluations; Ray's own daemons are not counted, nor is its start
(``ray_start_seconds``, wall, reported apart). Afterwards the returned policy plays 100 fresh
episodes in the benchmarks' evaluator (``bench_common/evaluate.py``), as RLlib's does.
"""

from __future__ import annotations

import argparse
import copy
import os

import numpy as np

from bench_common.evaluate import evaluate_batched
from bench_common.proc import cpu, emit, setup_process


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-env-steps", type=int, default=500_000)
    ap.add_argument("--fresh-episodes", type=int, default=100)
    ap.add_argument("--exp-dir", required=True)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)
    from stride.entry import parallel_pipeline
    from stride.zoo.cartpole.config.parallel import cartpole_impala_config as zoo

    main_cfg = copy.deepcopy(zoo.main_config)
    main_cfg["exp_name"] = os.path.abspath(args.exp_dir)
    c0 = cpu()
    policy = parallel_pipeline([main_cfg, copy.deepcopy(zoo.create_config), copy.deepcopy(zoo.system_config)],
                               seed=args.seed, max_env_step=args.max_env_steps, progress=False)
    outer = cpu() - c0

    def act(batch: np.ndarray) -> np.ndarray:
        out = policy.eval_mode.forward({i: o for i, o in enumerate(batch)})
        return np.stack([out[i]["action"] for i in range(len(batch))])

    fresh = evaluate_batched(act, args.fresh_episodes, 8, 30_000 + args.seed) if args.fresh_episodes else []
    r = dict(policy.result)
    emit({"contestant": "stride", "seed": args.seed, "reached": bool(r["stop"]), "env_steps": r["env_step"],
          "train_cpu_seconds": r["train_cpu_seconds"], "eval_cpu_seconds": r["eval_cpu_seconds"],
          "ray_start_seconds": r["ray_start_seconds"], "wall_seconds": r["wall_seconds"],
          "last_eval_return": r["eval_return"], "fresh_returns": fresh, "driver_outer_cpu_seconds": outer,
          "result": r, **info}, args.out)


if __name__ == "__main__":
    main()
