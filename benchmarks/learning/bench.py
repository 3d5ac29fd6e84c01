"""Time to a robust policy, judged the way a user compares libraries (issue 13). Run through ``run.sh``.

The rule, the same for every contestant:
  * every ``--eval-every`` env steps (the case's screen interval: 1,000 on CartPole / Pendulum, 10,000
    on LunarLander), a deterministic evaluation of ``--eval-episodes`` (10) episodes: the screen;
  * a screen whose mean reaches the stop value is a hit only if ``--confirm-episodes`` (100) further
    episodes of that same policy, on other seeds, reach it too; the run stops at the first
    confirmed hit (a failed confirmation is counted and training goes on);
  * train CPU seconds = process CPU of the training loop up to the confirmed hit, every evaluation
    excluded; budget per case in env steps, else "not confirmed";
  * afterwards the returned policy is evaluated once more on ``--fresh-episodes`` (100) episodes of
    seeds no evaluation used (the same seeds for every contestant);
  * per case: median over seeds (never the minimum), a seed that does not confirm counts as
    infinite.

Cases (``bench_common.cases``; ``--cases``, alias ``--algos``): dqn, ppo (CartPole-v1), sac
(Pendulum-v1), lunarlander_dqn, lunarlander_ppo (LunarLander-v3); each names its Stride zoo config, env,
rl-zoo3 entry, budget and screen interval.

Contestants, each seed in its own fresh process (``torch.set_num_threads(1)``), interleaved:
  stride -- ``serial_pipeline`` on the case's zoo config, the rule imposed through Stride's evaluator
            (``eval_freq_envstep``, ``n_evaluator_episode``, ``confirm_episode``);
  sb3    -- stable-baselines3 with rl-zoo3's tuned hyper-parameters for the same env
            (``bench_common.sb3_run``), the rule in an SB3 callback (``bench_common.sb3``).
Targets: Stride's median train CPU below SB3's for every case, and every Stride seed confirmed.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional

from bench_common.cases import CASES
from bench_common.driver import Runner, add_common_args, fmt, median_or_inf, start, stride_eval_settings, uptime

HERE = os.path.dirname(os.path.abspath(__file__))


SB3_SCREEN = re.compile(r"\[sb3\] env step (\d+): screen (-?[\d.]+)(?:, confirmation (-?[\d.]+))?; "
                        r"train CPU so far (-?[\d.]+) s")


def cut_run(folders: List[str], name: str, contestant: str, case: str, seed: int, stop_value: float) -> Optional[dict]:
    """A run stopped before it ended (``--report-from`` on a cut run): how far it got without
    confirming, from its screens (Stride's ``progress.csv``, SB3's log lines); None if it left nothing.
    Its train CPU is a lower bound of what it would have needed (``censored``)."""
    screens = []  # (env step, screen mean, confirmation mean or None, train CPU s so far)
    for d in folders:
        if contestant == "stride":
            path = os.path.join(d, f"stride_{case}_seed{seed}", "progress.csv")
            if os.path.exists(path):
                with open(path) as f:
                    screens = [(int(r["envstep"]), float(r["eval_return_mean"]),
                                float(r["confirm_return_mean"]) if r.get("confirm_return_mean") else None,
                                float(r["train_cpu_seconds"])) for r in csv.DictReader(f) if r.get("eval_return_mean")]
        elif os.path.exists(os.path.join(d, name + ".log")):
            with open(os.path.join(d, name + ".log")) as f:
                screens = [(int(m[1]), float(m[2]), None if m[3] is None else float(m[3]), float(m[4]))
                           for m in SB3_SCREEN.finditer(f.read())]
        if screens:
            break
    if not screens:
        return None
    hits = [s for s in screens if s[1] >= stop_value and s[0] > 0]
    return {"censored": True, "stop": False, "env_step": screens[-1][0], "train_cpu_seconds": screens[-1][3],
            "confirm_return": None, "first_screen_hit": hits[0][0] if hits else None,
            "unconfirmed": [(s[0], round(s[1], 1), round(s[2], 1)) for s in hits if s[2] is not None and s[2] < stop_value]}


def row_of(contestant: str, r: Optional[dict], stop_value: float) -> Dict[str, Any]:
    """One run as the table's columns (None fields where the run failed)."""
    if r is None:
        return {"contestant": contestant, "failed": True}
    if r.get("censored"):
        out = {"env_step": r["env_step"], "train_cpu": r["train_cpu_seconds"], "confirm": None, "censored": True,
               "contestant": contestant, "confirmed": False, "first_screen_hit": r["first_screen_hit"],
               "unconfirmed": len(r["unconfirmed"]), "unconfirmed_list": r["unconfirmed"], "fresh": None,
               "failed": False, "fresh_holds": False}
        return out
    if contestant == "stride":
        res = r["result"]
        confirmed = bool(res["stop"])
        out = {"env_step": res["env_step"], "train_cpu": res["train_cpu_seconds"], "confirm": res["eval_return"]}
    else:
        confirmed = bool(r["stop"])
        out = {"env_step": r["env_step"], "train_cpu": r["train_cpu_seconds"], "confirm": r.get("confirm_return")}
    fresh = r.get("fresh_returns")
    out.update(contestant=contestant, confirmed=confirmed, first_screen_hit=r.get("first_screen_hit"),
               unconfirmed=len(r.get("unconfirmed", [])), unconfirmed_list=r.get("unconfirmed", []),
               fresh=(sum(fresh) / len(fresh)) if fresh else None, failed=False,
               fresh_holds=(fresh is not None and sum(fresh) / len(fresh) >= stop_value))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(ap)
    ap.add_argument("--cases", "--algos", dest="cases", nargs="+", choices=sorted(CASES), default=["dqn", "ppo", "sac"])
    ap.add_argument("--only", nargs="+", choices=["stride", "sb3"], default=["stride", "sb3"])
    ap.add_argument("--eval-every", type=int, default=0, help="screen interval in env steps (0: each case's own)")
    ap.add_argument("--eval-episodes", type=int, default=10)
    ap.add_argument("--confirm-episodes", type=int, default=100)
    ap.add_argument("--fresh-episodes", type=int, default=100)
    ap.add_argument("--budget", nargs="+", default=[], metavar="CASE=STEPS",
                    help=f"env-step budget per case (default {({k: c.budget for k, c in CASES.items()})})")
    ap.add_argument("--jobs", type=int, default=1, help="contestant processes at a time (CPU time is per process)")
    ap.add_argument("--stride-set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a key of Stride's config (sweeps; the report says so)")
    ap.add_argument("--report-from", nargs="+", default=[], metavar="DIR",
                    help="run nothing: rebuild the report from these results folders of earlier runs (same flags); a run "
                         "cut before it ended counts as not confirmed by the train CPU it had spent (a lower bound)")
    ap.add_argument("--report-name", default="learning",
                    help="results/<name>_<date>.txt (e.g. learning_lunarlander beside the CartPole report)")
    ap.add_argument("--stride-config-module", default=None, help="a config module instead of the zoo's (one case)")
    args = ap.parse_args()
    budget = {k: CASES[k].budget for k in args.cases}
    for item in args.budget:
        k, _, v = item.partition("=")
        if k not in CASES:
            ap.error(f"--budget {item!r}: unknown case {k!r}; valid: {', '.join(sorted(CASES))}")
        budget[k] = int(float(v))
    screen_every = {k: args.eval_every or CASES[k].eval_every for k in args.cases}

    ses = start(args.report_name, args.stride_ref)
    run = Runner(ses.logdir, args.timeout, ses.stride_src, HERE)
    rule = ["--eval-episodes", args.eval_episodes, "--confirm-episodes", args.confirm_episodes,
            "--fresh-episodes", args.fresh_episodes]
    jobs: List[tuple] = []
    stop_values = {}
    for algo in args.cases:
        stop_values[algo] = stride_eval_settings(ses.stride_src, args.stride_config_module or CASES[algo].config)["stop_value"]
        for seed in args.seeds:
            for c in args.only:
                if c == "stride":
                    extra = [x for kv in args.stride_set for x in ("--set", kv)]
                    if args.stride_config_module:
                        extra += ["--config-module", args.stride_config_module]
                    jobs.append((algo, seed, c, "bench_common.stride_run",
                                 ["--case", algo, "--seed", seed, "--max-env-steps", budget[algo],
                                  "--exp-dir", os.path.join(ses.logdir, f"stride_{algo}_seed{seed}"),
                                  "--eval-every", screen_every[algo], *rule, *extra]))
                else:
                    jobs.append((algo, seed, c, "bench_common.sb3_run",
                                 ["--case", algo, "--seed", seed, "--max-env-steps", budget[algo],
                                  "--stop-value", stop_values[algo], "--eval-every", screen_every[algo], *rule]))
    print(f"{len(jobs)} runs, {args.jobs} at a time; rule: screen {args.eval_episodes} episodes every {screen_every} "
          f"env steps, confirm on {args.confirm_episodes}, fresh check on {args.fresh_episodes}; budgets {budget}")
    if args.report_from:
        outs = []
        for algo, seed, c, _, _ in jobs:
            name = f"{c}_{algo}_seed{seed}"
            found = [p for d in args.report_from for p in glob.glob(os.path.join(d, name + ".json"))]
            if found:
                with open(found[0]) as f:
                    outs.append(json.load(f))
            else:
                outs.append(cut_run(args.report_from, name, c, algo, seed, stop_values[algo]))
    else:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            outs = list(pool.map(lambda j: run(f"{j[2]}_{j[0]}_seed{j[1]}", j[3], *j[4]), jobs))
    raw: Dict[str, Any] = {}
    for (algo, seed, c, _, _), r in zip(jobs, outs):
        raw.setdefault(algo, {}).setdefault(c, {})[seed] = r

    up_end = uptime()
    lines = ses.report_header("Time to a robust policy (issue 13's rule)", up_end)
    lines += [f"rule: {args.eval_episodes}-episode screen every {screen_every} env steps; a hit needs {args.confirm_episodes} "
              f"further episodes of that policy to clear the threshold too; train CPU s exclude every evaluation; "
              f"medians over seeds {args.seeds} (unconfirmed = inf); budgets {budget}",
              f"fresh: the returned policy's mean over {args.fresh_episodes} episodes of seeds no evaluation used"]
    if args.report_from:
        lines.append(f"REBUILT from {args.report_from}: runs without a result were cut before they ended ('CUT'); "
                     f"their train CPU so far bounds the medians from below ('>=')")
    if args.stride_set or args.stride_config_module:
        lines.append(f"STRIDE CONFIG OVERRIDDEN: {args.stride_set} {args.stride_config_module or ''}")
    lines.append("")
    summary: Dict[str, Any] = {}
    for algo in args.cases:
        sv = stop_values[algo]
        lines.append(f"{algo} ({CASES[algo].title}, threshold {sv:g}, budget {budget[algo]} env steps, "
                     f"screen every {screen_every[algo]})")
        lines.append("  seed  contestant  confirmed  env steps  train CPU s  first screen hit  failed confirms  "
                     "confirm mean  fresh mean")
        rows: Dict[str, List[dict]] = {c: [] for c in args.only}
        for seed in args.seeds:
            for c in args.only:
                row = row_of(c, raw[algo][c].get(seed), sv)
                rows[c].append(row)
                if row["failed"]:
                    lines.append(f"  {seed:>4}  {c:<10}  FAILED (see the log folder)")
                    continue
                verdict = "yes" if row["confirmed"] else ("CUT" if row.get("censored") else "NO")
                lines.append(f"  {seed:>4}  {c:<10}  {verdict:<9}  {row['env_step']:>9}  "
                             f"{fmt(row['train_cpu']):>11}  {fmt(row['first_screen_hit'], '{}'):>16}  "
                             f"{row['unconfirmed']:>15}  {fmt(row['confirm']):>12}  {fmt(row['fresh']):>10}")
        med = {}
        for c in args.only:
            ok = [r for r in rows[c] if not r["failed"]]
            # a cut run counts with what it had spent: the median is then a lower bound
            cpu = median_or_inf(r["train_cpu"] if r["confirmed"] or r.get("censored") else None for r in ok) if ok else None
            steps = median_or_inf(r["env_step"] if r["confirmed"] or r.get("censored") else None for r in ok) if ok else None
            bound = ">=" if any(r.get("censored") for r in ok) else ""
            med[c] = {"train_cpu": cpu, "env_step": steps, "lower_bound": bool(bound),
                      "confirmed": sum(r["confirmed"] for r in ok), "runs": len(rows[c]),
                      "unconfirmed": sum(r["unconfirmed"] for r in ok),
                      "fresh_holds": sum(bool(r.get("fresh_holds")) for r in ok)}
            lines.append(f"  median {c:<10} train CPU s {bound}{fmt(cpu)}, env steps {bound}{fmt(steps, '{:.0f}')}; confirmed "
                         f"{med[c]['confirmed']}/{med[c]['runs']}; failed confirmations {med[c]['unconfirmed']}; "
                         f"fresh check holds {med[c]['fresh_holds']}/{med[c]['runs']}")
        if "stride" in med and "sb3" in med:
            a, b = med["stride"]["train_cpu"], med["sb3"]["train_cpu"]
            ratio = a / b if a is not None and b is not None and math.isfinite(a) and math.isfinite(b) else None
            if med["stride"]["lower_bound"]:
                ratio = None  # Stride's own median is unknown
            ok = ratio is not None and ratio < 1.0
            rel = "<=" if med["sb3"]["lower_bound"] else ""
            lines.append(f"  Stride median train CPU s / SB3 median train CPU s = {rel}{fmt(ratio, '{:.3f}')}   target < 1   "
                         f"[{'MET' if ok else 'NOT MET'}]")
            med["ratio"] = ratio
        if "stride" in med:
            all_in = med["stride"]["confirmed"] == med["stride"]["runs"]
            lines.append(f"  every Stride seed confirmed within the budget: {'MET' if all_in else 'NOT MET'}")
        summary[algo] = med
        lines.append("")
    ses.write_report(lines, {"args": vars(args), "summary": summary, "runs": raw})


if __name__ == "__main__":
    main()
