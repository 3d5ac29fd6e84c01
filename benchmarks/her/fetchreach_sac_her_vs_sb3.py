"""SAC + HER on FetchReach-v4: Stride against Stable-Baselines3 (``HerReplayBuffer``), same env-step
budget and hyper-parameters, one contestant at a time, each in its own fresh process.

    nice -n 5 .venv/bin/python benchmarks/her/fetchreach_sac_her_vs_sb3.py --env-step 20000 --seeds 0 1 2 --out OUT

Stride runs the zoo's ``fetchreach_sac_her`` (``-e fetchreach -p sac_her``); the peer is
``sb3_her_fetchreach.py`` in ``benchmarks/.venv-peers`` (``bench_common/setup_peers.sh``), with Stride
on ``PYTHONPATH`` for the env only. Rule for both (Stride's evaluator's): a 20-episode success screen
every 2,000 env steps, a passing screen (>= 0.9) confirmed on 100 further episodes, a confirmed one
stops the run; then 100 fresh episodes of the final policy. Printed per seed and written to
``<out>/summary.json``: env steps used, confirmation, final success, train CPU-seconds (evaluation
excluded), the success curves, the ratios SB3 / Stride and ``uptime`` before and after each run.
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, List

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER_PY = os.path.join(REPO, "benchmarks", ".venv-peers", "bin", "python")


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _stride(env_step: int, seed: int, out: str) -> Dict[str, Any]:
    from stride.entry import eval_pipeline, serial_pipeline
    from stride.zoo.fetch.config import fetchreach_sac_her_config as mod

    exp = os.path.join(out, f"stride_seed{seed}")
    uptime0, wall = _uptime(), time.perf_counter()
    policy = serial_pipeline([copy.deepcopy(mod.main_config), copy.deepcopy(mod.create_config)], seed=seed,
                             max_env_step=env_step, exp_name=exp, progress=False)
    r = policy.result
    final = eval_pipeline(r["exp_dir"], n_episode=100)
    with open(os.path.join(r["exp_dir"], "progress.csv")) as f:
        curve: List[Dict[str, str]] = [{k: row[k] for k in ("envstep", "eval_return_mean", "confirm_return_mean",
                                                              "train_cpu_seconds")} for row in csv.DictReader(f)]
    return {"contestant": "stride SAC + HER", "seed": seed, "env_step": r["env_step"], "stop_confirmed": r["stop"],
            "final_success_100": final["mean"], "train_cpu_seconds": round(r["train_cpu_seconds"], 1),
            "wall_seconds": round(time.perf_counter() - wall, 1), "curve": curve,
            "uptime_start": uptime0, "uptime_end": _uptime()}


def _sb3(env_step: int, seed: int) -> Dict[str, Any]:
    if not os.path.exists(PEER_PY):
        raise SystemExit(f"no peer venv at {PEER_PY}: run benchmarks/bench_common/setup_peers.sh")
    env = dict(os.environ, PYTHONPATH=REPO)
    proc = subprocess.run([PEER_PY, os.path.join(REPO, "benchmarks", "her", "sb3_her_fetchreach.py"),
                           "--env-step", str(env_step), "--seed", str(seed)],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env-step", type=int, default=20_000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--out", default="bench_her_fetch_out")
    ap.add_argument("--only", choices=("stride", "sb3"), default=None)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.only == "stride":  # the child process of one Stride run
        for seed in args.seeds:
            result = _stride(args.env_step, seed, args.out)  # no file until there is a result
            with open(os.path.join(args.out, f"stride_seed{seed}.json"), "w") as f:
                json.dump(result, f, indent=1)
        return
    runs: List[Dict[str, Any]] = []
    for seed in args.seeds:
        if args.only is None:
            subprocess.run([sys.executable, os.path.abspath(__file__), "--env-step", str(args.env_step), "--seeds",
                            str(seed), "--out", args.out, "--only", "stride"], check=True)
            with open(os.path.join(args.out, f"stride_seed{seed}.json")) as f:
                stride = json.load(f)
        peer = _sb3(args.env_step, seed)
        pair = {"seed": seed, "sb3": peer}
        if args.only is None:
            pair["stride"] = stride
            pair["ratio_env_step_sb3_over_stride"] = round(peer["env_step"] / stride["env_step"], 2)
            pair["ratio_train_cpu_sb3_over_stride"] = round(peer["train_cpu_seconds"] / stride["train_cpu_seconds"], 2)
        runs.append(pair)
        for name in ("stride", "sb3"):
            if name in pair:
                r = pair[name]
                print(f"seed {seed} {name:6s} env_step={r['env_step']:6d} confirmed={r['stop_confirmed']!s:5s} "
                      f"final_success_100={r['final_success_100']:.2f} train_cpu={r['train_cpu_seconds']:.1f}s "
                      f"| load {r['uptime_start'].split('load average:')[-1].strip()} -> "
                      f"{r['uptime_end'].split('load average:')[-1].strip()}", flush=True)
        if "stride" in pair:
            print(f"seed {seed} ratios SB3/Stride: env steps {pair['ratio_env_step_sb3_over_stride']}, "
                  f"train CPU {pair['ratio_train_cpu_sb3_over_stride']}", flush=True)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"env_step_budget": args.env_step, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
