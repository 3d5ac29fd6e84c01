"""R2D3 (R2D2 + demonstrations) against R2D2 alone on one zoo env, same config and env-step budget.

    nice -n 5 .venv/bin/python benchmarks/r2d3/bench.py --env mountaincar --expert-policy scripted --env-step 60000
    nice -n 5 .venv/bin/python benchmarks/r2d3/bench.py --env cartpole_pomdp --seeds 0 1 2 --env-step 60000

1. The expert: the zoo's ``<env>_<expert-policy>`` config trained with ``--expert-seed`` (not one of
   the seeds compared) to a confirmed ``--expert-stop`` (or given: ``--expert CKPT_OR_EXP_DIR``);
   ``--expert-policy scripted``: the zoo family's scripted expert (MountainCar's energy pumping).
2. Its demonstrations: ``collect_demo_data`` (the greedy expert's whole episodes, a Minari dataset;
   scripted: the family's ``write_expert_demo``; or given: ``--demo DIR``), ``--episodes`` of them.
3. For each seed, R2D2 (``<env>_r2d2``) then R2D3 (``<env>_r2d3``, which is R2D2's config plus
   ``policy.collect.data_path`` and the demo ratio), each in its own fresh process (clean CPU
   accounting, one torch thread), up to ``--env-step`` env steps. The zoo's evaluator rule stops a
   run: a 10-episode screen every ``eval_freq_envstep`` env steps, and a screen at the stop value
   must hold on 100 further episodes (``confirm_episode``).
4. Per run: env steps at the confirmed stop (or "-" within the budget), train CPU-seconds
   (``time.process_time()`` less evaluation), and the returned policy's mean over 100 fresh episodes
   (``eval_pipeline``, eval seeds = seed + 10000); the 1-minute load average before and after.

The report (medians over seeds; a run that did not confirm counts as above the budget) is printed
and written to ``<out>/report.txt``, raw figures to ``<out>/runs.json``.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _child(args: argparse.Namespace, *extra: str) -> None:
    """This script again, in a fresh process."""
    subprocess.run([sys.executable, os.path.abspath(__file__), "--env", args.env, "--out", args.out, *extra],
                   check=True)


# ---- the pieces, each run in its own process ---------------------------------------------------
def train_expert(args: argparse.Namespace) -> None:
    from stride.entry import serial_pipeline
    from stride.entry.utils import zoo_config

    main, create = copy.deepcopy(zoo_config(args.env, args.expert_policy))
    main["env"]["stop_value"] = args.expert_stop
    exp = os.path.join(args.out, "expert")
    policy = serial_pipeline([main, create], seed=args.expert_seed, max_env_step=args.expert_env_step, exp_name=exp,
                             progress=False)
    r = policy.result
    _write(args, "expert", {"exp_dir": r["exp_dir"], "stop": r["stop"], "env_step": r["env_step"],
                            "eval_return": r.get("eval_return"), "train_cpu_seconds": r["train_cpu_seconds"]})


def collect_demos(args: argparse.Namespace) -> None:
    from stride.entry import collect_demo_data
    from stride.entry.utils import zoo_config

    if args.expert_policy == "scripted":  # the zoo family's scripted expert (mountaincar)
        family = importlib.import_module(f"stride.zoo.{args.env}")
        _write(args, "demo", {"path": family.write_expert_demo(os.path.join(args.out, "demo"), args.episodes,
                                                                seed=args.expert_seed)})
        return

    main, create = copy.deepcopy(zoo_config(args.env, args.expert_policy))
    main["env"]["collector_env_num"] = 1  # (episodes in order, no bias to short ones)
    path = collect_demo_data([main, create], args.expert_seed, args.expert, n_episode=args.episodes,
                             out_dir=os.path.join(args.out, "demo"))
    _write(args, "demo", {"path": path})


def run_one(args: argparse.Namespace, algo: str, seed: int) -> None:
    from stride.entry import eval_pipeline, serial_pipeline
    from stride.entry.utils import zoo_config

    main, create = copy.deepcopy(zoo_config(args.env, algo))
    if algo == "r2d3":
        main["policy"]["collect"]["data_path"] = args.demo
    load0 = _load()
    policy = serial_pipeline([main, create], seed=seed, max_env_step=args.env_step,
                             exp_name=os.path.join(args.out, f"{algo}_seed{seed}"), progress=False)
    r = policy.result
    load1 = _load()
    fresh = eval_pipeline(r["exp_dir"], n_episode=100)
    _write(args, f"{algo}_seed{seed}", {
        "algo": algo, "seed": seed, "stop": bool(r["stop"]), "env_step": int(r["env_step"]),
        "train_cpu_seconds": round(float(r["train_cpu_seconds"]), 1), "fresh_100_mean": round(float(fresh["mean"]), 1),
        "confirm_return": r.get("eval_return"), "load_before": load0, "load_after": load1})


def _write(args: argparse.Namespace, name: str, row: Dict[str, Any]) -> None:
    with open(os.path.join(args.out, f"{name}.json"), "w") as f:
        json.dump(row, f, indent=1)
    print(name, row, flush=True)


def _read(args: argparse.Namespace, name: str) -> Dict[str, Any]:
    with open(os.path.join(args.out, f"{name}.json")) as f:
        out: Dict[str, Any] = json.load(f)
    return out


# ---- the report ----------------------------------------------------------------------------------
def _steps(row: Dict[str, Any]) -> float:
    return float(row["env_step"]) if row["stop"] else float("inf")


def report(args: argparse.Namespace, rows: List[Dict[str, Any]], head: List[str]) -> str:
    lines = list(head)
    lines.append("")
    lines.append("| algo | seed | env steps to confirmed stop | train CPU s | fresh 100-ep mean | load before / after |")
    lines.append("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        steps = f"{r['env_step']:,}" if r["stop"] else f"- (not within {r['env_step']:,})"
        lines.append(f"| {r['algo']} | {r['seed']} | {steps} | {r['train_cpu_seconds']:.1f} | {r['fresh_100_mean']:.1f} | "
                     f"{r['load_before']} / {r['load_after']} |")
    lines.append("")
    for algo in ("r2d2", "r2d3"):
        mine = [r for r in rows if r["algo"] == algo]
        if not mine:
            continue
        med = statistics.median(_steps(r) for r in mine)
        med_s = f"{med:,.0f}" if med != float("inf") else f"> {args.env_step:,} (budget)"
        lines.append(f"{algo}: median env steps to the confirmed stop {med_s}; median train CPU s "
                     f"{statistics.median(r['train_cpu_seconds'] for r in mine):.1f}; median fresh 100-ep mean "
                     f"{statistics.median(r['fresh_100_mean'] for r in mine):.1f}; confirmed {sum(r['stop'] for r in mine)}"
                     f"/{len(mine)}")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="cartpole_pomdp", help="zoo env with r2d2 and r2d3 configs")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--env-step", type=int, default=60_000, help="budget of every compared run")
    ap.add_argument("--expert", default=None, help="expert checkpoint or experiment folder (default: train one)")
    ap.add_argument("--expert-policy", default="r2d2",
                    help="zoo policy of the expert (default r2d2), or 'scripted': the zoo family's write_expert_demo")
    ap.add_argument("--expert-seed", type=int, default=100)
    ap.add_argument("--expert-stop", type=float, default=475.0, help="the expert's confirmed stop value")
    ap.add_argument("--expert-env-step", type=int, default=150_000)
    ap.add_argument("--demo", default=None, help="a demonstration dataset (default: collect one from the expert)")
    ap.add_argument("--episodes", type=int, default=10, help="expert episodes in the dataset")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None, help=argparse.SUPPRESS)  # expert | demo | <algo>:<seed>
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = os.path.join(HERE, "..", "results", "r2d3_" + time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime()))
    if args.only is not None:
        from stride.utils.registry import import_components

        import_components()
        if args.only == "expert":
            train_expert(args)
        elif args.only == "demo":
            collect_demos(args)
        else:
            algo, seed = args.only.split(":")
            run_one(args, algo, int(seed))
        return
    os.makedirs(args.out, exist_ok=True)
    head = [f"R2D3 vs R2D2 on {args.env}, budget {args.env_step:,} env steps, seeds {args.seeds}",
            f"uptime at start: {_uptime()}"]
    common = ["--expert-policy", args.expert_policy, "--expert-seed", str(args.expert_seed)]
    if args.demo is None:
        if args.expert is None and args.expert_policy != "scripted":
            _child(args, "--only", "expert", *common, "--expert-stop", str(args.expert_stop),
                   "--expert-env-step", str(args.expert_env_step))
            expert = _read(args, "expert")
            args.expert = expert["exp_dir"]
            head.append(f"expert: {args.expert_policy} seed {args.expert_seed}, stop {args.expert_stop} "
                        f"confirmed={expert['stop']} at {expert['env_step']:,} env steps "
                        f"(confirmation mean {expert['eval_return']}, {expert['train_cpu_seconds']:.1f} train CPU s)")
        _child(args, "--only", "demo", *common, "--expert", str(args.expert), "--episodes", str(args.episodes))
        args.demo = _read(args, "demo")["path"]
    from stride.data.demo import load_demo_dataset

    demo = load_demo_dataset(args.demo)
    returns = [float(demo.columns["reward"][s:s + n].sum()) for s, n in zip(demo.starts.tolist(), demo.lengths.tolist())]
    head.append(f"demonstrations: {args.demo}: {len(returns)} episodes, {int(sum(demo.lengths))} transitions, "
                f"return mean {statistics.mean(returns):.1f} (min {min(returns):.1f}, max {max(returns):.1f})")
    rows = []
    for seed in args.seeds:
        for algo in ("r2d2", "r2d3"):
            _child(args, "--only", f"{algo}:{seed}", "--env-step", str(args.env_step), "--demo", args.demo)
            rows.append(_read(args, f"{algo}_seed{seed}"))
    head.append(f"uptime at end: {_uptime()}")
    text = report(args, rows, head)
    with open(os.path.join(args.out, "runs.json"), "w") as f:
        json.dump(rows, f, indent=1)
    with open(os.path.join(args.out, "report.txt"), "w") as f:
        f.write(text)
    print(text, flush=True)


if __name__ == "__main__":
    main()
