"""Issue 16's benchmark: the parallel pipeline's collector scaling and overheads, and IMPALA to 475
on CartPole-v1 against RLlib's IMPALA. Run by ``run.sh`` (see ``README.md``); every contestant is a
fresh process (:class:`bench_common.driver.Runner`), the report goes to ``benchmarks/results/``.

    python benchmarks/parallel/bench.py [--cases scaling overhead impala] [--seeds 0 1 2] ...
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from bench_common.driver import BENCH, Runner, add_common_args, fmt, median_or_inf, start, uptime, verdict  # noqa: E402

CASES = ("scaling", "overhead", "impala")
RLLIB_PY = os.path.join(BENCH, ".venv-rllib", "bin", "python")


def ms(xs: List[float]) -> str:
    return ", ".join(f"{x:.2f}" for x in xs)


def scaling(run: Runner, args: argparse.Namespace, raw: dict) -> List[str]:
    runs: Dict[int, List[dict]] = {1: [], 2: []}
    for rep in range(args.scaling_reps):  # interleaved: 1, 2, 1, 2, ...
        for k in (1, 2):
            r = run(f"scaling_k{k}_rep{rep}", "stride_scaling.py", "--collectors", k, "--env-steps", args.scaling_env_steps,
                    "--exp-dir", os.path.join(run.logdir, f"exp_scaling_k{k}_rep{rep}"))
            if r is not None:
                runs[k].append(r)
    raw["scaling"] = runs
    rate = {k: [r["window"]["env_steps_per_s_ex_eval"] for r in v if r.get("window")] for k, v in runs.items()}
    with_eval = {k: [r["window"]["env_steps_per_s"] for r in v if r.get("window")] for k, v in runs.items()}
    whole = {k: [r["run_env_steps_per_s"] for r in v] for k, v in runs.items()}
    med = {k: statistics.median(v) if v else None for k, v in rate.items()}
    ratio = med[2] / med[1] if med[1] and med[2] else None
    lines = ["", f"== Case 1: collector scaling on the 1 ms env ({args.scaling_env_steps} env steps per run, "
             f"{args.scaling_reps} interleaved runs per K; zoo parallel IMPALA config, learner doing its updates)",
             "   env steps/s = the coordinator's env-step count over its wall clock, from its 2nd evaluation row to its",
             "   last (Ray start, actor construction and first collects outside), minus the driver's CPU in the",
             "   1-episode evaluations inside it (figure with them counted in: 'with evals')"]
    for k in (1, 2):
        lines.append(f"   K={k}: median {fmt(med[k], '{:.0f}')} env steps/s  (runs: {ms(rate[k])}; with evals: {ms(with_eval[k])}; whole run incl. "
                     f"start-up: {ms(whole[k])}; Ray start s: {ms([r['result']['ray_start_seconds'] for r in runs[k]])})")
    lines.append(f"   ratio 2 vs 1 collectors: {fmt(ratio, '{:.2f}')}x   target >= 1.6 (quiet machine): "
                 f"{verdict(ratio, 1.6, '>=')}")
    return lines


def overhead(run: Runner, args: argparse.Namespace, raw: dict) -> List[str]:
    r = run("overhead", "overhead.py", "--reps", args.overhead_reps, "--exp-dir", os.path.join(run.logdir, "exp_overhead"))
    raw["overhead"] = r
    if r is None:
        return ["", "== Case 1b: overheads -- FAILED (see the log folder)"]
    return ["", f"== Case 1b: overheads through the roles (CartPole, zoo parallel IMPALA config, {r['reps']} reps, "
            f"medians, wall ms; one batch = {r['batch_env_steps']} env steps)",
            f"   Ray start-up (local_ray until connected): {r['ray_start_seconds']:.2f} s",
            f"   weight broadcast: publish (learner collect_state into the object store) {r['publish_ms']:.2f} ms; "
            f"load per collector {ms(r['load_ms'])} ms",
            f"   per-batch overhead (actor collect - in-process collect): {ms(r['per_batch_overhead_ms'])} ms "
            f"(actor {ms(r['actor_collect_ms'])} ms, in-process {r['inprocess_collect_ms']:.2f} ms)",
            f"   replay push round trip: {r['replay_push_ms']:.2f} ms"]


def impala(run: Runner, rllib: Optional[Runner], args: argparse.Namespace, raw: dict) -> List[str]:
    res: Dict[str, List[dict]] = {"stride": [], "rllib": []}
    for seed in args.seeds:
        r = run(f"impala_stride_s{seed}", "stride_impala.py", "--seed", seed, "--max-env-steps", args.max_env_steps,
                "--fresh-episodes", args.fresh_episodes, "--exp-dir", os.path.join(run.logdir, f"exp_impala_s{seed}"))
        if r is not None:
            res["stride"].append(r)
        if rllib is not None:
            r = rllib(f"impala_rllib_s{seed}", "rllib_impala.py", "--seed", seed, "--max-env-steps", args.max_env_steps,
                      "--budget-s", args.rllib_budget_s, "--fresh-episodes", args.fresh_episodes)
            if r is not None:
                res["rllib"].append(r)
    raw["impala"] = res
    lines = ["", "== Case 2: IMPALA on CartPole-v1 to a confirmed 475 (10 episodes every 1,000 env steps, confirmed on 100)",
             "   train CPU s = every actor's process CPU + the driver's training CPU - evaluation CPU; Ray daemons and",
             f"   Ray's start not counted (start reported apart); fresh = mean of {args.fresh_episodes} new episodes "
             "(bench_common/evaluate.py)"]
    med: Dict[str, Optional[float]] = {}
    for name, rs in res.items():
        if name == "rllib" and rllib is None:
            lines.append("   rllib: not run (benchmarks/.venv-rllib missing; run.sh creates it)")
            continue
        for r in rs:
            fresh = statistics.mean(r["fresh_returns"]) if r["fresh_returns"] else None
            lines.append(f"   {name:6s} seed {r['seed']}: {'reached' if r['reached'] else 'NOT reached'} at "
                         f"{r['env_steps']} env steps, train CPU {r['train_cpu_seconds']:.1f} s, last eval "
                         f"{fmt(r['last_eval_return'])}, fresh {fmt(fresh)}, wall {r['wall_seconds']:.0f} s, "
                         f"Ray start {r['ray_start_seconds']:.2f} s"
                         + (f", best screen {fmt(r['best_screen'])}" if "best_screen" in r else ""))
        med[name] = median_or_inf([r["train_cpu_seconds"] if r["reached"] else None for r in rs])
        lines.append(f"   {name}: median train CPU s to 475: {fmt(med[name])} (not reached counts as infinite)")
    s, r = med.get("stride"), med.get("rllib")
    if s is not None and r is not None and s != float("inf") and r == float("inf"):
        lines.append("   ratio Stride / RLlib train CPU: RLlib did not reach 475 within its budget (see where it got above)")
    else:
        lines.append(f"   ratio Stride / RLlib train CPU: {fmt(s / r if s and r and r != float('inf') else None, '{:.2f}')}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap)
    ap.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    ap.add_argument("--scaling-env-steps", type=int, default=20_000)
    ap.add_argument("--scaling-reps", type=int, default=3)
    ap.add_argument("--overhead-reps", type=int, default=50)
    ap.add_argument("--max-env-steps", type=int, default=500_000, help="case 2's env-step cap, both contestants")
    ap.add_argument("--rllib-budget-s", type=float, default=1800.0, help="RLlib's wall seconds of training at most")
    ap.add_argument("--fresh-episodes", type=int, default=100)
    args = ap.parse_args()
    session = start("parallel", args.stride_ref)
    run = Runner(session.logdir, args.timeout, session.stride_src, HERE, extra_path=[os.path.join(HERE, "site")])
    raw: dict = {"args": vars(args)}
    lines: List[str] = []
    if "scaling" in args.cases:
        lines += scaling(run, args, raw)
    if "overhead" in args.cases:
        lines += overhead(run, args, raw)
    if "impala" in args.cases:
        rllib = Runner(session.logdir, args.timeout, session.stride_src, HERE, python=RLLIB_PY) \
            if os.path.exists(RLLIB_PY) else None
        lines += impala(run, rllib, args, raw)
    session.write_report(session.report_header("Stride parallel pipeline (issue 16)", uptime()) + lines, raw)


if __name__ == "__main__":
    main()
