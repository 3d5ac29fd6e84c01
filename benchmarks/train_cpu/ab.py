"""Interleaved A/B of train CPU-seconds between two Stride checkouts on fixed workloads (issue 30).

    python benchmarks/train_cpu/ab.py --a /path/to/checkout_a --b /path/to/checkout_b [--reps 5] [--scale 1.0]

Workloads, each a ``serial_pipeline`` run of a zoo config with seed 0 and evaluation off (the
evaluator never triggers, so every run does the same work and none stops early at the stop value):

- ``dqn``: ``cartpole_dqn_config``, 4,000 train iterations (gradient steps; ~8,000 env steps);
- ``ppo``: ``cartpole_ppo_config``, 40 train iterations (40 collects of 256 env steps, 5 epochs each);
- ``sac``: ``pendulum_sac_config``, 2,000 train iterations (after its 800-step random warm-up, 4 env
  steps and 4 gradient steps per collect).

``--scale`` multiplies the train iterations (``--reps 2 --scale 0.25``: a smoke run of a few minutes). Every run is a fresh
Python process with ``PYTHONPATH`` set to its checkout (its ``stride`` package is the one imported;
checked), one torch thread, in a temporary folder (removed after it); the runs take turns A, B, B, A, A, B, ... per
workload and round, so a neighbour's burst of load lands on both sides alike. Measured: the run's
own ``train_cpu_seconds`` (``result.json``: process CPU from the start of the loop, evaluations
excluded), and, as a cross-check, the process CPU around the ``serial_pipeline`` call (set-up
included). A hash of the final weights is printed per workload and side: equal hashes mean the
two checkouts trained bit-identically. Printed: per workload the median of each side, the ratio
B/A of the medians and the median of the per-round ratios, the minima, and the 1-minute load
around every run with ``uptime`` at start and end (as the other benchmarks under ``benchmarks/``
do). Nothing is asserted; nothing is written unless ``--json PATH`` is given.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Tuple

#: workload -> (config module, pipeline limits at scale 1)
WORKLOADS: Dict[str, Tuple[str, Dict[str, int]]] = {
    "dqn": ("stride.zoo.cartpole.config.cartpole_dqn_config", {"max_train_iter": 4000}),
    "ppo": ("stride.zoo.cartpole.config.cartpole_ppo_config", {"max_train_iter": 40}),
    "sac": ("stride.zoo.pendulum.config.pendulum_sac_config", {"max_train_iter": 2000}),
}


def uptime() -> str:
    """``uptime``'s line (the load averages where the command is missing)."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "load average: %.2f, %.2f, %.2f" % os.getloadavg()


def limits(workload: str, scale: float) -> Dict[str, int]:
    """The workload's step limits at ``scale`` (at least 1 each)."""
    return {k: max(1, int(round(v * scale))) for k, v in WORKLOADS[workload][1].items()}


# ---- the child: one run in this process, with the checkout on PYTHONPATH ------------------------
def child(workload: str, scale: float, checkout: str, out: str) -> None:
    """One run of ``workload``; writes its measures as JSON to ``out``."""
    import importlib

    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    import stride
    from stride.entry import serial_pipeline

    where = os.path.dirname(os.path.dirname(os.path.abspath(stride.__file__)))
    if os.path.realpath(where) != os.path.realpath(checkout):
        raise SystemExit(f"imported stride from {where}, not from the checkout {checkout}")
    module = importlib.import_module(WORKLOADS[workload][0])
    main = copy.deepcopy(module.main_config)
    main["policy"]["eval"] = dict(evaluator=dict(eval_freq_envstep=10**12))  # no evaluation: training alone
    exp = os.path.join(os.path.dirname(os.path.abspath(out)), "run")  # in the driver's folder for this run
    cpu0 = time.process_time()
    policy = serial_pipeline([main, module.create_config], seed=0, exp_name=exp, progress=False,
                             **limits(workload, scale))
    outer = time.process_time() - cpu0
    h = hashlib.sha256()
    for k, v in policy.model.state_dict().items():
        h.update(k.encode())
        h.update(v.detach().cpu().numpy().tobytes())
    r = policy.result
    with open(out, "w") as f:
        json.dump({"train_cpu_seconds": float(r["train_cpu_seconds"]), "outer_cpu_seconds": outer,
                   "env_step": int(r["env_step"]), "train_iter": int(r["train_iter"]), "weights": h.hexdigest()[:16]}, f)


# ---- the driver --------------------------------------------------------------------------------
def run_one(checkout: str, workload: str, scale: float, timeout: float) -> Dict[str, Any]:
    """One run of ``workload`` on ``checkout`` in a fresh process; its measures and the load around it."""
    folder = tempfile.mkdtemp(prefix="stride_ab_")
    out = os.path.join(folder, "result.json")
    env = dict(os.environ, PYTHONPATH=checkout, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    load0 = os.getloadavg()[0]
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", workload, "--scale", str(scale),
                           "--checkout", checkout, "--out", out], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0 or not os.path.exists(out):
        raise SystemExit(f"{workload} on {checkout} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    with open(out) as f:
        result: Dict[str, Any] = json.load(f)
    shutil.rmtree(folder, ignore_errors=True)  # the run's experiment folder (checkpoints, logs) too
    result.update(load1_before=load0, load1_after=os.getloadavg()[0])
    return result


def report(args: argparse.Namespace, runs: Dict[str, Dict[str, List[Dict[str, Any]]]], up0: str, up1: str) -> None:
    """The table: per workload, each side's median and minimum, the ratios B/A, the weights' hashes."""
    print(f"# train CPU A/B: A = {args.a}, B = {args.b}; {args.reps} rounds, scale {args.scale}, interleaved")
    print(f"# uptime at start: {up0}")
    print(f"# uptime at end:   {up1}")
    print(f"{'workload':<9}{'steps':>22}{'A med s':>9}{'B med s':>9}{'B/A med':>9}{'B/A pair':>9}"
          f"{'A min s':>9}{'B min s':>9}{'B/A min':>9}  outer B/A  load1    weights")
    for workload, sides in runs.items():
        a = [float(r["train_cpu_seconds"]) for r in sides["A"]]
        b = [float(r["train_cpu_seconds"]) for r in sides["B"]]
        oa = [float(r["outer_cpu_seconds"]) for r in sides["A"]]
        ob = [float(r["outer_cpu_seconds"]) for r in sides["B"]]
        pair = statistics.median(y / x for x, y in zip(a, b))
        loads = [float(r[k]) for s in sides.values() for r in s for k in ("load1_before", "load1_after")]
        first = sides["A"][0]
        steps = f"{first['env_step']} env / {first['train_iter']} it"
        hashes = {side: {r["weights"] for r in rs} for side, rs in sides.items()}
        same = "identical" if hashes["A"] == hashes["B"] and len(hashes["A"]) == 1 else \
            f"A {sorted(hashes['A'])} B {sorted(hashes['B'])}"
        print(f"{workload:<9}{steps:>22}{statistics.median(a):9.3f}{statistics.median(b):9.3f}"
              f"{statistics.median(b) / statistics.median(a):9.3f}{pair:9.3f}{min(a):9.3f}{min(b):9.3f}"
              f"{min(b) / min(a):9.3f}  {statistics.median(ob) / statistics.median(oa):9.3f}  "
              f"{min(loads):.1f}-{max(loads):.1f}  {same}")


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", help="checkout A (the folder holding its stride/ package)")
    ap.add_argument("--b", help="checkout B")
    ap.add_argument("--reps", type=int, default=5, help="rounds: runs per workload and side")
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every workload's step limits")
    ap.add_argument("--only", nargs="*", choices=sorted(WORKLOADS), default=None, help="workloads (default: all)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds a run may take")
    ap.add_argument("--json", default=None, metavar="PATH", help="write every run's measures here")
    ap.add_argument("--child", choices=sorted(WORKLOADS), default=None, help=argparse.SUPPRESS)
    ap.add_argument("--checkout", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        child(args.child, args.scale, args.checkout, args.out)
        return
    if not args.a or not args.b:
        ap.error("give both checkouts: --a PATH --b PATH")
    for path in (args.a, args.b):
        if not os.path.isdir(os.path.join(path, "stride")):
            ap.error(f"{path!r} holds no stride/ package")
    args.a, args.b = os.path.abspath(args.a), os.path.abspath(args.b)
    workloads = args.only or list(WORKLOADS)
    runs: Dict[str, Dict[str, List[Dict[str, Any]]]] = {w: {"A": [], "B": []} for w in workloads}
    up0 = uptime()
    turn = 0
    for r in range(args.reps):
        for workload in workloads:
            order = ("A", "B") if turn % 2 == 0 else ("B", "A")  # A B, B A, A B, ...: neither side always first
            turn += 1
            for side in order:
                result = run_one(args.a if side == "A" else args.b, workload, args.scale, args.timeout)
                runs[workload][side].append(result)
                print(f"round {r} {workload} {side}: train CPU {float(result['train_cpu_seconds']):.3f} s "
                      f"(load1 {float(result['load1_before']):.2f} -> {float(result['load1_after']):.2f})",
                      file=sys.stderr, flush=True)
    up1 = uptime()
    report(args, runs, up0, up1)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"a": args.a, "b": args.b, "scale": args.scale, "reps": args.reps, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
