"""PPO + RND against PPO alone on MiniGrid-DoorKey-8x8, same PPO and env-step budget, one run at a time.

    nice -n 5 .venv/bin/python benchmarks/rnd/doorkey_rnd_vs_ppo.py --seeds 0 1 2 --env-step 300000 --out OUT

The two contestants are the zoo's configs: ``doorkey_ppo_rnd`` and ``doorkey_ppo`` with its env set
to DoorKey-8x8 (``doorkey_ppo_rnd`` imports ``doorkey_ppo``'s PPO, so they differ only by RND). Each
run is its own fresh process (clean CPU accounting, one torch thread) and stops when the
evaluator's 16-episode screen reaches 0.9 and its 100-episode confirmation holds, else at the
budget. Afterwards the returned policy (the run's last checkpoint) is evaluated over 100 fresh
episodes (eval seeds = seed + 10000). Printed per run and written to ``OUT/summary.json``: env
steps to solve (the confirmed stop; '-' when not solved within the budget), the first env step
whose screen saw a success, train CPU-seconds (evaluation excluded), the fresh 100-episode mean;
each run's curve (its ``progress.csv``) is copied to ``OUT/<name>_seed<S>.csv``.

``--reuse`` keeps a run whose ``OUT/<name>_seed<S>/result.json`` already exists (a finished run of
the same config) and only re-evaluates it; ``--only rnd|ppo`` runs one contestant.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional

NAMES = ("rnd", "ppo")


def _configs(name: str) -> List[Dict[str, Any]]:
    if name == "rnd":
        from stride.zoo.minigrid.config import doorkey_ppo_rnd_config as mod
        return [copy.deepcopy(mod.main_config), copy.deepcopy(mod.create_config)]
    from stride.zoo.minigrid.config import doorkey_ppo_config as ppo
    main: Dict[str, Any] = copy.deepcopy(ppo.main_config)
    main["env"] = dict(main["env"], env_id="MiniGrid-DoorKey-8x8-v0")
    return [main, copy.deepcopy(ppo.create_config)]


def _first_success(rows: List[Dict[str, str]]) -> Optional[int]:
    return next((int(r["envstep"]) for r in rows if float(r["eval_return_mean"] or 0) > 0), None)


def _one(name: str, seed: int, env_step: int, out: str, reuse: bool) -> Dict[str, Any]:
    from stride.entry import eval_pipeline, serial_pipeline

    exp = os.path.join(out, f"{name}_seed{seed}")
    if not (reuse and os.path.exists(os.path.join(exp, "result.json"))):
        serial_pipeline(_configs(name), seed=seed, max_env_step=env_step, exp_name=exp, progress=False)
    with open(os.path.join(exp, "result.json")) as f:
        r = json.load(f)
    with open(os.path.join(exp, "progress.csv")) as f:
        rows = list(csv.DictReader(f))
    shutil.copyfile(os.path.join(exp, "progress.csv"), os.path.join(out, f"{name}_seed{seed}.csv"))
    final = eval_pipeline(exp, n_episode=100)
    return {"name": name, "seed": seed, "env_step": r["env_step"], "solved": bool(r["stop"]),
            "solved_at": r["env_step"] if r["stop"] else None, "first_success": _first_success(rows),
            "confirmation": r["eval_return"] if r["stop"] else None,
            "train_cpu_seconds": round(r["train_cpu_seconds"], 1), "fresh_100_mean": round(float(final["mean"]), 3)}


def _table(results: List[Dict[str, Any]]) -> str:
    lines = ["run  seed  solved_at  first_success  env_steps  train_cpu_s  fresh_100_mean"]
    for r in results:
        lines.append(f"{r['name']:<4} {r['seed']:>4}  {r['solved_at'] or '-':>9}  {r['first_success'] or '-':>13}  "
                     f"{r['env_step']:>9}  {r['train_cpu_seconds']:>11}  {r['fresh_100_mean']:>14}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--env-step", type=int, default=300_000)
    ap.add_argument("--out", default="bench_rnd_out")
    ap.add_argument("--only", choices=NAMES, default=None)
    ap.add_argument("--reuse", action="store_true", help="keep finished runs in OUT, only re-evaluate them")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.child:  # one run in this process
        (seed,) = args.seeds
        res = _one(str(args.only), seed, args.env_step, args.out, args.reuse)
        with open(os.path.join(args.out, f"{args.only}_seed{seed}.json"), "w") as f:
            json.dump(res, f, indent=1)
        return
    results = []
    for seed in args.seeds:
        for name in NAMES if args.only is None else (args.only,):
            cmd = [sys.executable, __file__, "--seeds", str(seed), "--env-step", str(args.env_step), "--out", args.out,
                   "--only", name, "--child"] + (["--reuse"] if args.reuse else [])
            subprocess.run(cmd, check=True)
            with open(os.path.join(args.out, f"{name}_seed{seed}.json")) as f:
                results.append(json.load(f))
            print(_table(results[-1:]).splitlines()[-1], flush=True)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"env_step_budget": args.env_step, "runs": results}, f, indent=1)
    print(_table(results))


if __name__ == "__main__":
    main()
