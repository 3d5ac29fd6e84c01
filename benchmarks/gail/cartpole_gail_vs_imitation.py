"""GAIL on CartPole-v1: Stride against `imitation` (HumanCompatibleAI 1.0.1), the same expert
demonstrations, the same env-step budget and the same stop rule, one contestant at a time, each in
its own fresh process. Run through ``run.sh`` (which makes the peer's venv):

    bash benchmarks/gail/run.sh --seeds 0 1 2 [--env-step 200000] [--dqn-env-step 50000] [--demo DATASET_DIR]
                                [--imitation-generators ppo dqn] [--only stride|imitation]

1. The expert (once, unless ``--demo`` names a dataset): the zoo's ``cartpole_ppo`` trained with seed
   0 to its confirmed stop, then 10 greedy episodes written as a Minari dataset by
   :func:`stride.entry.collect_demo_data` (``stride -m collect_demo``) and exported to ``demo.npz``
   (``export_demo.py``) for the peer. The stop value is 90 % of the demonstrations' mean return.
2. Per seed: Stride's zoo ``cartpole_dqn_gail`` (DQN learner, ``-e cartpole -p dqn_gail``) with
   ``reward_model.data_path`` = the dataset and ``env.stop_value`` = the stop value; then
   ``imitation_gail.py`` in ``benchmarks/.venv-imitation``: the peer, imitation's GAIL in its tutorial's
   setting (SB3 PPO generator, ``--env-step`` budget), and a diagnostic, imitation's GAIL with an SB3
   DQN generator in Stride's DQN / discriminator setting (``--dqn-env-step`` budget, default 50k), which
   tells the learner's share of the difference from the GAIL implementation's. Neither learner sees the
   env's reward.

Rule for both (Stride's evaluator's): a 10-episode deterministic screen (Stride: every 1,000 env
steps; imitation + PPO: after every GAIL round of 16,384 env steps, the only points where its policy
changes; imitation + DQN: after every round of 1,000 env steps); a screen at the stop value is
confirmed on 100 further episodes, and a confirmed one stops the run; then 100 fresh episodes of the final policy. Train CPU seconds: process CPU, evaluation
excluded. Prints the table, medians, ratios imitation / Stride and the 1-minute load; writes
``benchmarks/results/gail_<date>.txt`` (and the raw JSON, logs, runs under ``--out``).
"""

from __future__ import annotations

import argparse
import copy
import csv
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PEER_PY = os.path.join(REPO, "benchmarks", ".venv-imitation", "bin", "python")


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _load(uptime: str) -> str:
    return uptime.split("load average:")[-1].strip().split(",")[0]


def make_demo(out: str, episodes: int) -> str:
    """Train the expert (zoo ``cartpole_ppo``, seed 0) and record ``episodes`` greedy episodes; returns the dataset."""
    from stride.entry import collect_demo_data, serial_pipeline_onpolicy
    from stride.zoo.cartpole.config import cartpole_ppo_config as ppo

    cfg = [copy.deepcopy(ppo.main_config), copy.deepcopy(ppo.create_config)]
    policy = serial_pipeline_onpolicy(cfg, seed=0, exp_name=os.path.join(out, "expert_ppo"), progress=False)
    r = policy.result
    print(f"[gail] expert: stop={r['stop']} env_step={r['env_step']} eval_return={r['eval_return']}", flush=True)
    return collect_demo_data(cfg, 0, r["exp_dir"], n_episode=episodes, out_dir=os.path.join(out, "demo"))


def run_stride(demo: str, stop_value: float, env_step: int, seed: int, out: str) -> Dict[str, Any]:
    """One Stride run (called in a child process): zoo ``cartpole_dqn_gail`` on ``demo``."""
    from stride.entry import eval_pipeline, serial_pipeline_reward_model
    from stride.zoo.cartpole.config import cartpole_dqn_gail_config as mod

    main = copy.deepcopy(mod.main_config)
    main["reward_model"]["data_path"] = os.path.abspath(demo)
    main["env"]["stop_value"] = stop_value
    uptime0, wall = _uptime(), time.perf_counter()
    policy = serial_pipeline_reward_model([main, copy.deepcopy(mod.create_config)], seed=seed, max_env_step=env_step,
                                          exp_name=os.path.join(out, f"stride_seed{seed}"), progress=False)
    r = policy.result
    final = eval_pipeline(r["exp_dir"], n_episode=100)
    with open(os.path.join(r["exp_dir"], "progress.csv")) as f:
        curve = [{"envstep": int(row["envstep"]), "screen": float(row["eval_return_mean"]),
                  "confirm": float(row["confirm_return_mean"]) if row["confirm_return_mean"] else None,
                  "train_cpu_seconds": float(row["train_cpu_seconds"])} for row in csv.DictReader(f)]
    return {"contestant": "stride GAIL + DQN", "seed": seed, "env_step": int(r["env_step"]),
            "stop_confirmed": bool(r["stop"]), "confirm_mean": round(float(r["eval_return"]), 1) if r["stop"] else None,
            "final_mean_100": round(float(final["mean"]), 1), "train_cpu_seconds": round(r["train_cpu_seconds"], 1),
            "eval_cpu_seconds": round(r["eval_cpu_seconds"], 1), "wall_seconds": round(time.perf_counter() - wall, 1),
            "curve": curve, "uptime_start": uptime0, "uptime_end": _uptime()}


def _child_stride(args: argparse.Namespace, demo: str, stop: float, seed: int) -> Dict[str, Any]:
    path = os.path.join(args.out, f"stride_seed{seed}.json")
    subprocess.run([sys.executable, os.path.abspath(__file__), "--child-stride", "--demo", demo, "--stop-value",
                    str(stop), "--env-step", str(args.env_step), "--seeds", str(seed), "--out", args.out], check=True)
    with open(path) as f:
        return json.load(f)


def _child_imitation(args: argparse.Namespace, npz: str, stop: float, seed: int, generator: str) -> Dict[str, Any]:
    if not os.path.exists(PEER_PY):
        raise SystemExit(f"no peer venv at {PEER_PY}: run benchmarks/gail/setup_imitation.sh")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "benchmarks"))
    budget = args.env_step if generator == "ppo" else args.dqn_env_step
    proc = subprocess.run([PEER_PY, os.path.join(HERE, "imitation_gail.py"), "--demo", npz, "--env-step",
                           str(budget), "--seed", str(seed), "--stop-value", str(stop), "--generator", generator,
                           "--out", os.path.join(args.out, f"imitation_{generator}_seed{seed}")],
                          capture_output=True, text=True, env=env)
    with open(os.path.join(args.out, f"imitation_{generator}_seed{seed}.log"), "w") as f:
        f.write(proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"imitation_gail.py failed (seed {seed}, rc {proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _steps(r: Dict[str, Any]) -> str:
    return f"{r['env_step']:,}" if r["stop_confirmed"] else f"not by {r['env_step']:,}"


def _median(xs: List[Optional[float]]) -> Optional[float]:
    """Median with unreached runs counted as +inf (None when the median itself is unreached)."""
    m = statistics.median([float("inf") if x is None else x for x in xs])
    return None if m == float("inf") else m


def report(runs: List[Dict[str, Any]], meta: Dict[str, Any]) -> List[str]:
    lines = [f"GAIL on {meta['env_id']}: Stride vs imitation {meta['imitation_version']}, "
             f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"expert: {meta['expert']}; demonstrations: {meta['demo_episodes']} episodes, {meta['demo_transitions']} "
             f"transitions, mean return {meta['expert_return']:.1f}; stop value {meta['stop_value']:.1f} (90 %), "
             f"confirmed on 100 episodes; budget {meta['env_step_budget']:,} env steps "
             f"(imitation + SB3 DQN diagnostic: {meta['dqn_env_step_budget']:,})",
             f"uptime at start: {meta['uptime_start']}", "",
             "| contestant | seed | env steps to the confirmed stop | confirmation mean | train CPU s | "
             "final 100-episode mean | load 1-min start -> end |", "| --- | --- | --- | --- | --- | --- | --- |"]
    names = [k for k in runs[0] if k != "seed"]
    for pair in runs:
        for name in names:
            r = pair[name]
            lines.append(f"| {r['contestant']} | {r['seed']} | {_steps(r)} | {r['confirm_mean'] if r['confirm_mean'] is not None else '-'} | "
                         f"{r['train_cpu_seconds']:.1f} | {r['final_mean_100']:.1f} | "
                         f"{_load(r['uptime_start'])} -> {_load(r['uptime_end'])} |")
    lines.append("")
    for name in names:
        rs = [p[name] for p in runs]
        steps = _median([r["env_step"] if r["stop_confirmed"] else None for r in rs])
        cpu = _median([r["train_cpu_seconds"] if r["stop_confirmed"] else None for r in rs])
        lines.append(f"median {rs[0]['contestant']}: env steps {'not reached' if steps is None else f'{steps:,.0f}'}, "
                     f"train CPU s {'not reached' if cpu is None else f'{cpu:.1f}'} (unconfirmed runs count as "
                     f"infinite), final mean {statistics.median(r['final_mean_100'] for r in rs):.1f}, "
                     f"{sum(r['stop_confirmed'] for r in rs)}/{len(rs)} confirmed")
    for peer in (n for n in names if n != "stride" and "stride" in names):
        for pair in runs:
            s, i = pair["stride"], pair[peer]
            if s["stop_confirmed"] and i["stop_confirmed"]:
                lines.append(f"seed {s['seed']} {i['contestant']} / {s['contestant']}: env steps "
                             f"{i['env_step'] / s['env_step']:.1f}x, train CPU {i['train_cpu_seconds'] / s['train_cpu_seconds']:.1f}x")
            else:
                lines.append(f"seed {s['seed']} {i['contestant']} / {s['contestant']}: no ratio (a run did not confirm)")
    lines.append(f"uptime at end: {_uptime()}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--env-step", type=int, default=200_000, help="budget per run (both contestants)")
    ap.add_argument("--demo", default=None, help="an existing demonstration dataset (default: train the expert)")
    ap.add_argument("--demo-episodes", type=int, default=10)
    ap.add_argument("--imitation-generators", nargs="+", choices=("ppo", "dqn"), default=["ppo", "dqn"],
                    help="ppo: imitation's tutorial setting (the peer); dqn: SB3 DQN in Stride's setting (a diagnostic)")
    ap.add_argument("--dqn-env-step", type=int, default=50_000, help="budget of the imitation + SB3 DQN diagnostic")
    ap.add_argument("--only", choices=("stride", "imitation"), default=None)
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results/gail_<timestamp>)")
    ap.add_argument("--stop-value", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--child-stride", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_stride:  # one Stride run, in its own process; no file until there is a result
        result = run_stride(args.demo, args.stop_value, args.env_step, args.seeds[0], args.out)
        with open(os.path.join(args.out, f"stride_seed{args.seeds[0]}.json"), "w") as f:
            json.dump(result, f, indent=1)
        return
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d_%H%M%S")
    args.out = os.path.abspath(args.out or os.path.join(REPO, "benchmarks", "results", f"gail_{stamp}"))
    os.makedirs(args.out, exist_ok=True)
    uptime0 = _uptime()
    demo = os.path.abspath(args.demo) if args.demo else make_demo(args.out, args.demo_episodes)
    sys.path.insert(0, HERE)
    from export_demo import export

    npz = os.path.join(args.out, "demo.npz")
    info = export(demo, npz)
    stop = round(0.9 * info["mean_return"], 1)
    peer_version = subprocess.run([PEER_PY, "-c", "import importlib.metadata as m; print(m.version('imitation'))"],
                                  capture_output=True, text=True).stdout.strip() if os.path.exists(PEER_PY) else "?"
    meta = {"env_id": info["env_id"], "imitation_version": peer_version, "demo": demo,
            "expert": "zoo cartpole_ppo, seed 0" if not args.demo else demo, "demo_episodes": info["episodes"],
            "demo_transitions": info["transitions"], "expert_return": info["mean_return"], "stop_value": stop,
            "env_step_budget": args.env_step, "dqn_env_step_budget": args.dqn_env_step,
            "uptime_start": uptime0}
    print(f"[gail] demonstrations {demo}: {info}; stop value {stop}", flush=True)
    runs: List[Dict[str, Any]] = []
    for seed in args.seeds:
        pair: Dict[str, Any] = {"seed": seed}
        if args.only in (None, "stride"):
            pair["stride"] = _child_stride(args, demo, stop, seed)
        if args.only in (None, "imitation"):
            for gen in args.imitation_generators:
                pair[f"imitation_{gen}"] = _child_imitation(args, npz, stop, seed, gen)
        for name in pair:
            if name != "seed":
                r = pair[name]
                print(f"[gail] seed {seed} {r['contestant']}: env_step {_steps(r)} train_cpu {r['train_cpu_seconds']}s "
                      f"final_100 {r['final_mean_100']} load {_load(r['uptime_start'])} -> {_load(r['uptime_end'])}",
                      flush=True)
        runs.append(pair)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"meta": meta, "runs": runs}, f, indent=1)
    lines = report(runs, meta)
    print("\n".join(lines))
    path = os.path.join(REPO, "benchmarks", "results", f"gail_{stamp}.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"[gail] report: {path}; runs, logs and raw JSON: {args.out}")


if __name__ == "__main__":
    main()
