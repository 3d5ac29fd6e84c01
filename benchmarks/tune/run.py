"""Issue 19's tuning check: does a ``stride -m tune`` study beat the zoo config it starts from?

    .venv/bin/python benchmarks/tune/run.py --env cartpole --policy dqn --trials 20 --trial-seeds 3 \
        --check-seeds 100 101 102 103 104 --out benchmarks/results/tune_cartpole_dqn

1. runs (or resumes) the study: ``stride -m tune -e ENV -p POLICY --trials N --trial-seeds K -s SEED``
   in ``OUT/study`` -- every trial scored by the median train CPU-seconds to the config's confirmed
   stop value over its K run seeds (SEED..SEED+K-1; ``--seed``, default 0); the report lists every
   trial (its per-seed scores and env steps: trial 0 is the zoo config's score in the study);
2. checks the result on seeds no trial used: the zoo config and the study's ``best_config.py``
   each run on every ``--check-seeds`` seed (one fresh process per run, one torch thread) to the
   confirmed stop value; reports per seed env steps and train CPU-seconds, the medians, the ratio
   best / zoo, and the machine load. A run that does not confirm within ``--max-env-step`` counts
   as infinite.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from typing import Dict, List

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def run(args: List[str]) -> None:
    print("+ stride " + " ".join(args), flush=True)
    subprocess.run([sys.executable, "-m", "stride", *args], check=True, cwd=REPO)


def check(label: str, source: List[str], seed: int, out: str, max_env_step: int) -> Dict[str, object]:
    exp = os.path.join(out, "check", f"{label}_seed{seed}")
    if not os.path.exists(os.path.join(exp, "result.json")):
        run(["-m", "serial", *source, "-s", str(seed), "--env-step", str(max_env_step), "--exp-name", exp, "--no-progress"])
    with open(os.path.join(exp, "result.json")) as f:
        r = json.load(f)
    return {"seed": seed, "reached": bool(r["stop"]), "env_step": r["env_step"], "train_cpu": r["train_cpu_seconds"],
            "confirm": r["eval_return"]}


def trial_lines(db: str, seed: int, k: int) -> List[str]:
    """One line per trial of the study: state, value, per-seed train CPU-s and env steps, params."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name=optuna.get_all_study_names(f"sqlite:///{db}")[0], storage=f"sqlite:///{db}")
    out = []
    for t in study.trials:
        scores = t.user_attrs.get("scores")
        steps = [t.user_attrs.get(f"env_step_seed{s}") for s in range(seed, seed + k)]
        params = {key: round(v, 5) if isinstance(v, float) else v for key, v in t.params.items()}
        value = "-" if t.value is None or t.state.name != "COMPLETE" else f"{t.value:.2f}"
        out.append(f"  trial {t.number:2d} {t.state.name:8s} {value:>6s} cpu {[round(x, 2) for x in scores] if scores else '-'} "
                   f"env steps {steps if scores else '-'} {params}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="cartpole")
    ap.add_argument("--policy", default="dqn")
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--trial-seeds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20,
                    help="the study's seed: its sampler's, and its trials' run seeds SEED..SEED+K-1 (default 20: the "
                         "zoo configs were picked on seeds 0-19, where their trial-0 score is in-sample)")
    ap.add_argument("--trial-cpu", type=float, default=20.0)
    ap.add_argument("--workers", type=int, default=1, help="trials at once (Ray tasks; 1: in one process)")
    ap.add_argument("--check-seeds", type=int, nargs="+", default=[100, 101, 102, 103, 104])
    ap.add_argument("--max-env-step", type=int, default=50_000)
    ap.add_argument("--out", default=os.path.join(REPO, "benchmarks", "results", "tune_cartpole_dqn"))
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    lines = [f"stride -m tune check -- {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", f"start: {load()}"]
    t0 = time.perf_counter()
    run(["-m", "tune", "-e", a.env, "-p", a.policy, "--trials", str(a.trials), "--trial-seeds", str(a.trial_seeds),
         "--trial-cpu", str(a.trial_cpu), "--workers", str(a.workers), "--exp-name", os.path.join(out, "study"), "-s", str(a.seed)])
    lines.append(f"study: {a.trials} trials x {a.trial_seeds} seeds ({a.seed}..{a.seed + a.trial_seeds - 1}), "
                 f"{a.workers} worker(s), {time.perf_counter() - t0:.0f} s wall, {load()}")
    lines += trial_lines(os.path.join(out, "study", "study.db"), a.seed, a.trial_seeds)
    best = os.path.join(out, "study", "best_config.py")
    with open(best) as f:
        lines.append("best config header: " + f.read().split('"""')[1].strip().replace("\n", " | "))
    rows: Dict[str, List[Dict[str, object]]] = {"zoo": [], "best": []}
    for seed in a.check_seeds:
        rows["zoo"].append(check("zoo", ["-e", a.env, "-p", a.policy], seed, out, a.max_env_step))
        rows["best"].append(check("best", ["-c", best], seed, out, a.max_env_step))
    med = {}
    for label, rs in rows.items():
        for r in rs:
            lines.append(f"  {label:4s} seed {r['seed']}: {'confirmed' if r['reached'] else 'NOT confirmed'} at "
                         f"{r['env_step']} env steps, train CPU {r['train_cpu']:.2f} s, confirmation {r['confirm']}")
        cpu = [float(r["train_cpu"]) if r["reached"] else math.inf for r in rs]
        steps = [float(r["env_step"]) if r["reached"] else math.inf for r in rs]
        med[label] = statistics.median(cpu)
        lines.append(f"  {label}: median train CPU s {statistics.median(cpu):.2f}, median env steps {statistics.median(steps):.0f}")
    lines.append(f"ratio best / zoo (median train CPU s to the confirmed stop value): {med['best'] / med['zoo']:.2f}")
    lines.append(f"end: {load()}")
    report = "\n".join(lines)
    print(report)
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write(report + "\n")


if __name__ == "__main__":
    main()
