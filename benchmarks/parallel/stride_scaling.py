"""Case 1 contestant: ``parallel_pipeline`` with K collector actors on the 1 ms env, one process per K.

    python parallel/stride_scaling.py --collectors 2 --env-steps 20000 --exp-dir DIR --out OUT.json

The zoo's parallel IMPALA CartPole config (its collect size, learner updates per batch and Ray CPU
shares) with the env swapped for :mod:`parallel.burn_env`, ``collector_num=K`` and one 1-episode
evaluation every ``env_steps / 10`` env steps (no stop value can be reached: returns are 50).
Timed: the coordinator's env-step counter against its own wall clock, both read from
``progress.csv`` (one row per evaluation), from the second row to the last, so Ray's start, the
actors' construction and the first collects are outside the window; the nine 50-ms evaluations
inside it are counted in (the same for every K); ``env_steps_per_s_ex_eval`` takes their share
of the driver's evaluation CPU (``eval_cpu_seconds`` x evaluations in the window / all) off the window. Also reported: ``ray_start_seconds`` and the whole
run's ``env_step / wall_seconds`` from ``result.json``.
"""

from __future__ import annotations

import argparse
import copy
import csv
import os

from bench_common.proc import emit, setup_process

from parallel.burn_env import ENV_ID


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--collectors", type=int, required=True)
    ap.add_argument("--env-steps", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exp-dir", required=True)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)
    from stride.entry import parallel_pipeline
    from stride.zoo.cartpole.config.parallel import cartpole_impala_config as zoo

    main_cfg = copy.deepcopy(zoo.main_config)
    main_cfg["exp_name"] = os.path.abspath(args.exp_dir)
    main_cfg["env"].update(env_id=ENV_ID, evaluator_env_num=1, n_evaluator_episode=1)
    main_cfg["policy"]["eval"]["evaluator"].update(eval_freq_envstep=max(1, args.env_steps // 10), confirm_episode=0)
    system = dict(copy.deepcopy(zoo.system_config), collector_num=args.collectors)
    policy = parallel_pipeline([main_cfg, copy.deepcopy(zoo.create_config), system], seed=args.seed,
                               max_env_step=args.env_steps, progress=False)
    result = dict(policy.result)
    with open(os.path.join(result["exp_dir"], "progress.csv")) as f:
        rows = [(int(r["envstep"]), float(r["wall_seconds"])) for r in csv.DictReader(f)]
    window = None
    if len(rows) >= 3:
        (e0, w0), (e1, w1) = rows[1], rows[-1]
        # the evaluations of rows 3..last ran inside the window: their share of the driver's eval CPU
        eval_s = float(result["eval_cpu_seconds"]) * (len(rows) - 2) / len(rows)
        window = {"env_steps": e1 - e0, "wall_seconds": w1 - w0, "env_steps_per_s": (e1 - e0) / (w1 - w0),
                  "eval_seconds": eval_s, "env_steps_per_s_ex_eval": (e1 - e0) / (w1 - w0 - eval_s)}
    emit({"case": "scaling", "collectors": args.collectors, "window": window,
          "run_env_steps_per_s": result["env_step"] / result["wall_seconds"], "result": result,
          "system_config": system, **info}, args.out)


if __name__ == "__main__":
    main()
