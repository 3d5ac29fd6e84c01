"""DQN + HER against plain DQN on BitFlip, same env-step budget, one run at a time.

    nice -n 5 .venv/bin/python benchmarks/her/bitflip_her_vs_dqn.py --n-bits 15 --env-step 300000 --seed 0

Each contestant runs in its own fresh process (clean CPU accounting; one torch thread, the
config's ``num_threads``). Each run is the zoo config (``bitflip_dqn_her`` / ``bitflip_dqn``) resized to ``--n-bits``; HER's
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
import subprocess
import sys
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
    os.makedirs(args.out, exist_ok=True)
    tag = f"bits{args.n_bits}_seed{args.seed}"
    if args.only is None:  # each contestant in a fresh process, one after the other
        summary: Dict[str, Any] = {"n_bits": args.n_bits, "env_step_budget": args.env_step, "seed": args.seed,
                                   "uptime_start": _uptime()}
        for name in ("her", "dqn"):
            subprocess.run([sys.executable, __file__, "--n-bits", str(args.n_bits), "--env-step", str(args.env_step),
                            "--seed", str(args.seed), "--out", args.out, "--only", name], check=True)
            with open(os.path.join(args.out, f"{name}_{tag}.json")) as f:
                summary[name] = json.load(f)
        summary["uptime_end"] = _uptime()
        with open(os.path.join(args.out, f"summary_{tag}.json"), "w") as f:
            json.dump(summary, f, indent=1)
        return
    runs = (("her", bitflip_dqn_her_config), ("dqn", bitflip_dqn_config))
    for name, mod in runs:
        if args.only != name:
            continue
        exp = os.path.join(args.out, f"{name}_{tag}")
        wall = time.perf_counter()
        policy = serial_pipeline([_resized(mod.main_config, args.n_bits), mod.create_config], seed=args.seed,
                                 max_env_step=args.env_step, exp_name=exp, progress=False)
        r = policy.result
        final = eval_pipeline(r["exp_dir"], n_episode=100)
        out = {"env_step": r["env_step"], "stop_confirmed": r["stop"], "final_success_100": final["mean"],
               "train_cpu_seconds": round(r["train_cpu_seconds"], 1),
               "wall_seconds": round(time.perf_counter() - wall, 1), "curve": _curve(r["exp_dir"])}
        print(name, {k: v for k, v in out.items() if k != "curve"}, flush=True)
        with open(os.path.join(args.out, f"{name}_{tag}.json"), "w") as f:
            json.dump(out, f, indent=1)


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    main()
