"""DQN + HER against plain DQN on BitFlip, same env-step budget, one process, one run at a time.

    nice -n 5 .venv/bin/python benchmarks/her/bitflip_her_vs_dqn.py --n-bits 15 --env-step 300000 --seed 0

Each run is the zoo config (``bitflip_dqn_her`` / ``bitflip_dqn``) resized to ``--n-bits``; HER's
run stops when the evaluator's 16-episode screen and its 100-episode confirmation reach 0.9
success. Afterwards each run's latest policy is evaluated over 100 fresh episodes (eval seeds =
seed + 10000). Printed and written to ``<out>/summary.json``: env steps used, whether the stop
value was confirmed, the final 100-episode success rate, train CPU-seconds, and the success curve
(``progress.csv`` of each run).
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import time
from typing import Any, Dict, List

from stride.entry import eval_pipeline, serial_pipeline
from stride.zoo.bitflip.config import bitflip_dqn_config, bitflip_dqn_her_config


def _resized(main: Dict[str, Any], n_bits: int) -> Dict[str, Any]:
    main = copy.deepcopy(main)
    main["env"]["n_bits"] = n_bits
    main["policy"]["model"].update(obs_shape=2 * n_bits, action_shape=n_bits)
    collect = main["policy"]["collect"]
    if collect.get("n_sample") is not None:
        collect["n_sample"] = 8 * n_bits
        main["policy"]["other"]["replay_buffer"]["replay_buffer_size"] = 4000 * n_bits
    return main


def _curve(exp_dir: str) -> List[Dict[str, str]]:
    with open(os.path.join(exp_dir, "progress.csv")) as f:
        return [{k: row[k] for k in ("envstep", "eval_return_mean", "train_cpu_seconds")} for row in csv.DictReader(f)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-bits", type=int, default=15)
    ap.add_argument("--env-step", type=int, default=300_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="bench_her_out")
    ap.add_argument("--only", choices=("her", "dqn"), default=None)
    args = ap.parse_args()
    summary: Dict[str, Any] = {"n_bits": args.n_bits, "env_step_budget": args.env_step, "seed": args.seed}
    runs = (("her", bitflip_dqn_her_config), ("dqn", bitflip_dqn_config))
    for name, mod in runs:
        if args.only not in (None, name):
            continue
        exp = os.path.join(args.out, f"{name}_bits{args.n_bits}_seed{args.seed}")
        wall = time.perf_counter()
        policy = serial_pipeline([_resized(mod.main_config, args.n_bits), mod.create_config], seed=args.seed,
                                 max_env_step=args.env_step, exp_name=exp, progress=False)
        r = policy.result
        final = eval_pipeline(r["exp_dir"], n_episode=100)
        summary[name] = {"env_step": r["env_step"], "stop_confirmed": r["stop"], "final_success_100": final["mean"],
                         "train_cpu_seconds": round(r["train_cpu_seconds"], 1),
                         "wall_seconds": round(time.perf_counter() - wall, 1), "curve": _curve(r["exp_dir"])}
        print(name, {k: v for k, v in summary[name].items() if k != "curve"}, flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
