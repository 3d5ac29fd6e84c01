"""Learning curves at a fixed budget (issue 15): Stride vs Stable-Baselines3 (and, on MuJoCo SAC / TD3,
Tianshou: ``--contestants stride tianshou``) on the same budget and seeds.

Cases (:mod:`cases`): DQN and PPO on MinAtar Breakout, SAC on Hopper-v5. Each contestant runs in its own
fresh process (one torch thread): Stride through ``serial_pipeline`` on its zoo config
(``bench_common.stride_run``; its own evaluator, ``--eval-episodes`` episodes every ``--eval-every`` env
steps, no stop value), SB3 through ``sb3_curve.py`` (rl-zoo3's hyper-parameters where rl-zoo3 has the
env, Stride's config translated otherwise). A Stride config with ``return_best`` confirms each new best screen
on its ``confirm_episode`` episodes and returns its best confirmed policy. After the budget the policy each returns plays
``--final-episodes`` (100) fresh episodes on seeds no evaluation used, with the same evaluator
(``bench_common.evaluate``) for both. The curve (env steps, mean return, train CPU s, wall s) goes to
``results/curves_<case>_<date>.csv``; the report (table, machine load) to ``results/curves_<date>.txt``,
and a PNG of the curves where matplotlib is installed. Unlike the peers' published benchmarks
(rl-zoo3's and Tianshou's report each library's own training-episode or evaluator returns; DI-engine's
its evaluator's), both contestants' final numbers here come from one evaluator on the same episodes,
next to their train CPU.

    bash benchmarks/curves/run.sh --cases breakout_ppo --seeds 0 1 2 [--budget 2000000] [--jobs 2]
    bash benchmarks/curves/run.sh --report results/curves_*/   # re-report finished runs (merges folders)
    bash benchmarks/curves/run.sh --dir DIR --job hopper_sac:0 --job breakout_dqn:1:1000000   # continuable

``--dir`` makes a run continuable: a job whose result is in DIR is skipped, one whose Stride run has a
checkpoint is resumed from it (``bench_common.stride_run --resume``: its ``progress.csv`` goes on),
so the same command after a kill picks up where it stopped (``queue.sh``). Stride runs checkpoint every
case's ``ckpt_every`` train iterations.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import glob
import json
import os
import shutil
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cases import CASES, VARIANTS  # noqa: E402

from bench_common.driver import RESULTS, Runner, add_common_args, fmt, start, uptime  # noqa: E402

#: the contestants; a peer runs its script here (Tianshou: its MuJoCo SAC / TD3 examples' values, on the
#: same envs, budget and evaluator, to read its published v3 figures against on v5)
CONTESTANTS = ("stride", "sb3", "tianshou")
PEER_SCRIPTS = {"sb3": "sb3_curve.py", "tianshou": "tianshou_curve.py"}
COLOURS = {"stride": "tab:blue", "sb3": "tab:orange", "tianshou": "tab:green"}


def stride_curve(record: dict) -> List[dict]:
    """Stride's curve from its run's ``progress.csv`` (the evaluator's rows). A run resumed from a
    checkpoint appends rows from the checkpoint's env step on: rows at or after it from the killed
    process (evaluations past its last checkpoint) give way to the resumed run's. A run that never
    trained (its budget inside the random warm-up) has no file and an empty curve."""
    rows: List[dict] = []
    path = os.path.join(record["exp_dir"], "progress.csv")
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for r in csv.DictReader(f):
            if r.get("eval_return_mean"):
                while rows and rows[-1]["env_step"] >= int(r["envstep"]):
                    rows.pop()
                rows.append({"env_step": int(r["envstep"]), "return_mean": float(r["eval_return_mean"]),
                             "return_min": float(r["eval_return_min"]), "return_max": float(r["eval_return_max"]),
                             "train_cpu_s": float(r["train_cpu_seconds"]), "wall_s": float(r["wall_seconds"])})
    return rows


def normalise(record: dict) -> dict:
    """One contestant's run as ``{contestant, case, seed, budget, env_step, curve, train_cpu, final}``."""
    if record["contestant"] == "stride":
        res = record["result"]
        return {"contestant": "stride", "case": record["case"], "seed": record["seed"], "budget": record["budget"],
                "env_step": res["env_step"], "curve": stride_curve(record), "train_cpu": res["train_cpu_seconds"],
                "wall": res["wall_seconds"], "final": record["fresh_returns"]}
    return {"contestant": record["contestant"], "case": record["case"], "seed": record["seed"], "budget": record["budget"],
            "env_step": record["env_step"], "curve": record["curve"], "train_cpu": record["train_cpu_seconds"],
            "wall": record["wall_seconds"], "final": record["final_returns"]}


def prune_checkpoints(exp_dir: str) -> None:
    """A finished run's checkpoints less the latest and the best (each holds the replay buffer)."""
    folder = os.path.join(exp_dir, "ckpt")
    with open(os.path.join(folder, "ckpt_latest.txt")) as f:
        keep = {f.read().strip(), "ckpt_best.pth.tar"}
    for p in glob.glob(os.path.join(folder, "iteration_*.pth.tar")):
        if os.path.basename(p) not in keep:
            os.remove(p)


def run_one(runner: Runner, case: str, contestant: str, seed: int, budget: int, eval_every: int,
            eval_episodes: int, final_episodes: int, ckpt_every: int = 0) -> Optional[dict]:
    """One contestant's run; in a folder that already holds it, its result (finished) or its
    continuation from the latest checkpoint (Stride; an SB3 run starts again)."""
    c = CASES[case]
    name = f"{case}_{contestant}_s{seed}"
    done = os.path.join(runner.logdir, name + ".json")
    if os.path.exists(done):
        print(f"  {name}: finished earlier ({done})", flush=True)
        with open(done) as f:
            return dict(json.load(f), case=case, budget=budget)
    if contestant == "stride":
        exp = os.path.join(runner.logdir, name)
        resume = os.path.isfile(os.path.join(exp, "ckpt", "ckpt_latest.txt"))
        if os.path.isdir(exp) and not resume:  # killed before its first checkpoint: nothing to continue
            shutil.rmtree(exp)
        r = runner(name, "bench_common.stride_run", "--config-module", c["config"],
                   "--seed", seed, "--max-env-steps", budget, "--exp-dir", exp,
                   "--eval-every", eval_every, "--eval-episodes", eval_episodes,
                   "--set", "env.stop_value=1e9", "--set", f"policy.learn.learner.hook.save_ckpt_after_iter={ckpt_every or c['ckpt_every']}",
                   *[a for kv in c.get("overrides", ()) for a in ("--set", kv)],
                   "--fresh-episodes", final_episodes, "--env-id", c["env_id"], *(["--resume"] if resume else []))
        if r is not None:
            prune_checkpoints(r["exp_dir"])
    else:
        r = runner(name, PEER_SCRIPTS[contestant], "--case", case, "--seed", seed, "--budget", budget, "--eval-every",
                   eval_every, "--eval-episodes", eval_episodes, "--final-episodes", final_episodes)
    if r is not None:
        r.update(case=case, budget=budget)
    return r


def at(curve: List[dict], step: int) -> Optional[float]:
    """Mean return of the last evaluation at or before ``step`` (None where the run stopped before it)."""
    pts = [p["return_mean"] for p in curve if p["env_step"] <= step]
    return pts[-1] if pts and curve[-1]["env_step"] >= step else None


def write_csv(runs: List[dict], path: str) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "contestant", "seed", "env_step", "return_mean", "return_min", "return_max", "episodes",
                    "train_cpu_s", "wall_s"])
        for r in runs:
            for p in r["curve"]:
                w.writerow([r["case"], r["contestant"], r["seed"], p["env_step"], round(p["return_mean"], 3),
                            round(p["return_min"], 3), round(p["return_max"], 3), "eval", round(p["train_cpu_s"], 2),
                            round(p["wall_s"], 2)])
            fin = r["final"]
            if not fin:
                continue
            w.writerow([r["case"], r["contestant"], r["seed"], r["env_step"], round(statistics.mean(fin), 3),
                        round(min(fin), 3), round(max(fin), 3), f"final {len(fin)}", round(r["train_cpu"], 2),
                        round(r["wall"], 2)])


def table(case: str, runs: List[dict]) -> List[str]:
    """Per run: final 100-episode mean ± std, curve at quarter budgets, train CPU, wall; then per contestant."""
    budget = max(r["budget"] for r in runs)
    marks = [budget // 4, budget // 2, 3 * budget // 4]
    peers = sorted({r["contestant"] for r in runs} - {"stride"})
    variant = " with " + " ".join(CASES[case]["overrides"]) if case in VARIANTS else "".join(f" vs {p}" for p in peers)
    lines = [f"\n== {case}: {CASES[case]['config']}{variant}, budget {budget:,} env steps; "
             f"published reference: {CASES[case]['published']}",
             f"{'contestant':<10} {'seed':>4} {'env steps':>10} " + " ".join(f"{'@' + format(m, ','):>11}" for m in marks)
             + f" {'final mean':>10} {'± std':>7} {'n':>4} {'best eval':>10} {'final/best':>10} {'train CPU s':>11}"
             + f" {'wall s':>8}"]
    for r in sorted(runs, key=lambda r: (r["contestant"] != "stride", r["seed"])):
        fin = r["final"]
        final = (f" {statistics.mean(fin):>10.2f} {statistics.pstdev(fin):>7.2f} {len(fin):>4}" if fin
                 else f" {'(stopped)':>10} {'':>7} {'':>4}")
        best = max((p["return_mean"] for p in r["curve"]), default=None)
        ratio = statistics.mean(fin) / best if fin and best and best > 0 else None
        final += f" {fmt(best, '{:.2f}'):>10} {fmt(ratio, '{:.0%}'):>10}"
        lines.append(f"{r['contestant']:<10} {r['seed']:>4} {r['env_step']:>10,} "
                     + " ".join(f"{fmt(at(r['curve'], m), '{:.2f}'):>11}" for m in marks)
                     + final + f" {r['train_cpu']:>11.0f} {r['wall']:>8.0f}")
    for who in CONTESTANTS:
        mine = [r for r in runs if r["contestant"] == who and r["final"]]
        if mine:
            finals = [statistics.mean(r["final"]) for r in mine]
            lines.append(f"{who:<10} median over {len(mine)} seed(s): final {statistics.median(finals):.2f}, "
                         f"train CPU {statistics.median(r['train_cpu'] for r in mine):.0f} s")
    return lines


#: (line style, marker) per seed in the plot
STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1)), "v")]


def plot(by_case: Dict[str, List[dict]], path: str) -> Optional[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(1, len(by_case), figsize=(5.5 * len(by_case), 4), squeeze=False)
    for ax, (case, runs) in zip(axes[0], sorted(by_case.items())):
        for r in sorted(runs, key=lambda r: (r["contestant"], r["seed"])):
            xs = [p["env_step"] for p in r["curve"]] + ([r["env_step"]] if r["final"] else [])
            ys = [p["return_mean"] for p in r["curve"]] + ([statistics.mean(r["final"])] if r["final"] else [])
            # colour: the contestant; line style and marker: the seed (several seeds of one colour stay apart)
            style = STYLES[int(r["seed"]) % len(STYLES)]
            ax.plot(xs, ys, color=COLOURS[r["contestant"]], alpha=0.8,
                    linestyle=style[0], marker=style[1], markersize=3, label=f"{r['contestant']} s{r['seed']}")
        ax.set_title(case)
        ax.set_xlabel("env steps")
        ax.set_ylabel("mean return (10 eps; last point: 100 fresh)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    return path


def case_of(env_id: str, algo: str) -> str:
    """The case a Stride run belongs to, from its ``total_config.json`` (env id and policy type; a
    variant case, one with ``overrides``, is only known by its run folder's name)."""
    for name, c in CASES.items():
        if name not in VARIANTS and c["algo"] == algo and c["env_id"].split(":")[-1].replace("MinAtarCHW/", "MinAtar/") == env_id:
            return name
    raise SystemExit(f"no case for env '{env_id}' with policy '{algo}'; cases: {', '.join(sorted(CASES))}")


def partial_stride(exp_dir: str) -> dict:
    """A Stride run stopped before its budget (no result JSON): its curve so far, no final evaluation."""
    with open(os.path.join(exp_dir, "total_config.json")) as f:
        total = json.load(f)
    with open(os.path.join(exp_dir, "run.json")) as f:
        budget = int(json.load(f)["max_env_step"])
    curve = stride_curve({"exp_dir": exp_dir})
    last = curve[-1] if curve else {"env_step": 0, "train_cpu_s": 0.0, "wall_s": 0.0}
    named = os.path.basename(os.path.normpath(exp_dir)).rsplit("_stride_s", 1)[0]
    case = named if named in CASES else case_of(total["env"]["env_id"], total["policy"]["type"])
    return {"contestant": "stride", "case": case,
            "seed": int(total.get("seed", 0)), "budget": budget, "env_step": last["env_step"], "curve": curve,
            "train_cpu": last["train_cpu_s"], "wall": last["wall_s"], "final": None}


def load_folders(folders: List[str]) -> List[dict]:
    """Every contestant result JSON in ``folders``, plus Stride runs that stopped early (partial)."""
    runs, done_dirs = [], set()
    for d in folders:
        for p in sorted(glob.glob(os.path.join(d, "*.json"))):
            with open(p) as f:
                r = json.load(f)
            if r.get("contestant") == "stride" and r.get("case") not in CASES:  # run by hand with bench_common.stride_run
                t = r["total_config"]
                r.update(case=case_of(t["env"]["env_id"], t["policy"]["type"]), budget=r["result"]["max_env_step"])
            if "contestant" in r and "case" in r:
                runs.append(normalise(r))
                if r["contestant"] == "stride":
                    done_dirs.add(os.path.realpath(r["exp_dir"]))
        for p in sorted(glob.glob(os.path.join(d, "*.json.partial"))):  # SB3 runs stopped before their budget
            with open(p) as f:
                r = json.load(f)
            last = r["curve"][-1] if r["curve"] else {"env_step": 0, "train_cpu_s": 0.0, "wall_s": 0.0}
            runs.append({**r, "env_step": last["env_step"], "train_cpu": last["train_cpu_s"], "wall": last["wall_s"],
                         "final": None})
        for prog in sorted(glob.glob(os.path.join(d, "*", "progress.csv"))):
            exp = os.path.dirname(prog)
            if os.path.realpath(exp) not in done_dirs:
                runs.append(partial_stride(exp))
    return runs


def job(text: str) -> Tuple[str, int, int]:
    """``CASE:SEED[:BUDGET]`` -> ``(case, seed, budget)`` (budget 0: the case's, or --budget)."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or parts[0] not in CASES or not all(p.isdigit() for p in parts[1:]):
        raise argparse.ArgumentTypeError(f"job '{text}' is not CASE:SEED[:BUDGET] with CASE one of "
                                         f"{', '.join(sorted(CASES))}")
    return parts[0], int(parts[1]), int(parts[2]) if len(parts) == 3 else 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", nargs="+", choices=sorted(CASES), default=sorted(set(CASES) - VARIANTS),
                    help="default: every case but the variants (the ones with overrides)")
    ap.add_argument("--contestants", nargs="+", choices=CONTESTANTS, default=["stride", "sb3"],
                    help="tianshou: MuJoCo SAC / TD3 cases only (tianshou_curve.py)")
    ap.add_argument("--budget", type=int, default=0, help="env steps (0: each case's default)")
    ap.add_argument("--eval-every", type=int, default=0, help="env steps between evaluations (0: the case's)")
    ap.add_argument("--eval-episodes", type=int, default=10)
    ap.add_argument("--ckpt-every", type=int, default=0, help="Stride: checkpoint every N train iterations (0: the case's)")
    ap.add_argument("--final-episodes", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2, help="contestant processes at a time")
    ap.add_argument("--report", nargs="+", default=None, metavar="DIR",
                    help="no runs: report the finished runs in these result folders (merged)")
    ap.add_argument("--dir", default=None, help="results folder to use, continuing what it holds: finished jobs are "
                    "skipped, Stride runs with a checkpoint resumed (default: a new results/curves_<cases>_<time>/)")
    ap.add_argument("--job", action="append", default=[], type=job, metavar="CASE:SEED[:BUDGET]",
                    help="run these jobs, in order (instead of --cases x --seeds; repeatable)")
    add_common_args(ap)
    args = ap.parse_args()

    if args.report:
        runs, up_start, header = load_folders(args.report), uptime(), [f"curves report of {', '.join(args.report)}"]
        stem = os.path.join(RESULTS, "curves_" + dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"))
    else:
        s = start("curves_" + "_".join(args.cases), args.stride_ref, args.dir)
        runner = Runner(s.logdir, args.timeout, s.stride_src, HERE)
        todo = args.job or [(c, seed, 0) for c in args.cases for seed in args.seeds]
        jobs: List[Tuple] = [(c, who, seed, budget or args.budget or CASES[c]["budget"],
                              args.eval_every or CASES[c]["eval_every"])
                             for c, seed, budget in todo for who in args.contestants
                             if who == "stride" or c not in VARIANTS]  # variants: Stride's config only
        unfit = sorted({c for c, who, *_ in jobs if who == "tianshou" and CASES[c]["algo"] not in ("sac", "td3")})
        if unfit:
            raise SystemExit(f"--contestants tianshou runs MuJoCo SAC / TD3 cases only, not {', '.join(unfit)}")
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            done = list(pool.map(lambda j: run_one(runner, *j, args.eval_episodes, args.final_episodes, args.ckpt_every), jobs))
        for r in done:
            if r is not None:
                with open(os.path.join(s.logdir, f"{r['case']}_{r['contestant']}_s{r['seed']}.json"), "w") as f:
                    json.dump(r, f)
        runs = load_folders([s.logdir])
        up_start, header, stem = s.up_start, s.report_header("Fixed-budget learning curves", uptime()), s.logdir
    by_case: Dict[str, List[dict]] = {}
    for r in runs:
        by_case.setdefault(r["case"], []).append(r)
    lines = list(header) + ([f"uptime at start: {up_start}", f"uptime now:      {uptime()}"] if args.report else [])
    for case, rs in sorted(by_case.items()):
        path = stem + f"_{case}.csv" if args.report else os.path.join(s.logdir, f"{case}.csv")
        write_csv(rs, path)
        lines += table(case, rs) + [f"curve CSV: {os.path.relpath(path)}"]
    png = plot(by_case, stem + ".png" if args.report else os.path.join(s.logdir, "curves.png")) if by_case else None
    lines.append(f"plot: {os.path.relpath(png)}" if png else "plot: matplotlib not installed")
    print("\n".join(lines))
    with open((stem if args.report else os.path.join(s.logdir, "report")) + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
