"""Driver toolkit of the benchmark suites: results folder and Stride source for a run, the
subprocess runner for contestants, Stride's evaluation settings, report and number helpers."""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Iterable, List, Optional, Sequence

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
REPO = os.path.dirname(BENCH)
RESULTS = os.path.join(BENCH, "results")


def uptime() -> str:
    """``uptime``'s line (load averages if the command is missing)."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception:  # noqa: BLE001
        return "load average: %.2f, %.2f, %.2f" % os.getloadavg()


def get(d: dict, dotted: str, default: Any = None) -> Any:
    """``d["a"]["b"]`` for ``"a.b"``; ``default`` where a key is missing."""
    for k in dotted.split("."):
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def add_common_args(ap: argparse.ArgumentParser) -> None:
    """The flags every driver has: --seeds, --stride-ref, --timeout."""
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--stride-ref", default=None,
                    help="benchmark Stride as committed at this git ref (exported with git archive into the results "
                         "folder) instead of the working tree, which other people may be editing")
    ap.add_argument("--timeout", type=float, default=3600, help="wall seconds per contestant process (then SIGTERM: a Stride run checkpoints)")


@dataclass
class Session:
    """One driver run: start time, its log folder, uptime at start and where Stride comes from."""

    prefix: str
    now: dt.datetime
    logdir: str
    up_start: str
    stride_src: str
    git_state: str

    def report_header(self, title: str, up_end: str) -> List[str]:
        """Title, machine, Stride checkout and uptime lines that open every report."""
        return [f"{title} -- {self.now.strftime('%Y-%m-%d %H:%M UTC')}",
                f"machine: {platform.node()} {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
                f"python {platform.python_version()}",
                f"stride checkout: {self.git_state}",
                f"uptime at start: {self.up_start}",
                f"uptime at end:   {up_end}"]

    def write_report(self, lines: List[str], raw: dict) -> None:
        """Print the report, write it to ``results/<prefix>_<date>.txt`` and the log folder, raw JSON beside it."""
        text = "\n".join(lines)
        print("\n" + text)
        path = os.path.join(RESULTS, f"{self.prefix}_{self.now.strftime('%Y-%m-%d')}.txt")
        with open(path, "w") as f:
            f.write(text + "\n")
        with open(os.path.join(self.logdir, "raw.json"), "w") as f:
            json.dump(raw, f, indent=1, default=str)
        shutil.copy(path, os.path.join(self.logdir, "report.txt"))
        print(f"\nreport written to {path}")


def start(prefix: str, stride_ref: Optional[str], logdir: Optional[str] = None) -> Session:
    """Create ``results/<prefix>_<timestamp>/`` (or use ``logdir``, which may exist: a run of it
    continued) and pick Stride's source: the working tree, or ``git archive <stride_ref> stride``
    unpacked into that folder -- once: a continued folder keeps the source it was started with."""
    os.makedirs(RESULTS, exist_ok=True)
    now = dt.datetime.now(dt.timezone.utc)
    # absolute: the contestants run in other folders, and stride_src/ is put on their PYTHONPATH
    logdir = os.path.abspath(logdir or os.path.join(RESULTS, f"{prefix}_{now.strftime('%Y-%m-%dT%H%M%SZ')}"))
    os.makedirs(logdir, exist_ok=True)
    up_start = uptime()
    pinned = os.path.join(logdir, "stride_src.txt")
    if stride_ref and os.path.exists(pinned):
        with open(pinned) as f:
            return Session(prefix, now, logdir, up_start, os.path.join(logdir, "stride_src"), f.read().strip())
    if stride_ref:
        stride_src = os.path.join(logdir, "stride_src")
        os.makedirs(stride_src, exist_ok=True)
        sha = subprocess.run(["git", "rev-parse", "--short", stride_ref], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.strip()
        arch = subprocess.run(["git", "archive", "--format=tar", sha, "stride"], cwd=REPO, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", stride_src], input=arch.stdout, check=True)
        git_state = f"{sha} ({stride_ref}, exported with git archive to {stride_src})"
        with open(pinned, "w") as f:
            f.write(git_state + "\n")
    else:
        stride_src = REPO
        try:
            head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
            dirty = subprocess.run(["git", "status", "--porcelain", "--", "stride"], cwd=REPO, capture_output=True,
                                   text=True).stdout.strip().splitlines()
            git_state = f"working tree at {head}" + (f" + {len(dirty)} uncommitted paths under stride/" if dirty else " (stride/ clean)")
        except Exception as e:  # noqa: BLE001
            git_state = f"unknown ({e!r})"
    return Session(prefix, now, logdir, up_start, stride_src, git_state)


def stride_eval_settings(stride_src: str, config_module: str, iters_per_collect: bool = True) -> dict:
    """Stride's stop rule and evaluation period from a zoo config (plain dicts; no pipeline run).

    The period in env steps is the evaluator's ``eval_freq_envstep`` when the config sets it, else
    ``eval_freq x n_sample / update_per_collect`` (with ``iters_per_collect=False``, PPO: one
    train iteration per collect, ``eval_freq x n_sample``); ``confirm_episode`` is the size of
    the confirmation a passing evaluation needs (0: none).
    """
    sys.path.insert(0, stride_src)
    mod = importlib.import_module(config_module)
    p, e = mod.main_config["policy"], mod.main_config["env"]
    eval_freq = get(p, "eval.evaluator.eval_freq")
    every_envstep = get(p, "eval.evaluator.eval_freq_envstep")
    n_sample = get(p, "collect.n_sample")
    upc = get(p, "learn.update_per_collect", 1) if iters_per_collect else 1
    steps = every_envstep or (eval_freq * n_sample / upc if eval_freq and n_sample and upc else None)
    return {"stop_value": e.get("stop_value"), "n_evaluator_episode": e.get("n_evaluator_episode"),
            "evaluator_env_num": e.get("evaluator_env_num"), "eval_freq_train_iter": eval_freq,
            "env_steps_per_eval": steps, "confirm_episode": get(p, "eval.evaluator.confirm_episode", 0) or 0}


def stop_after(proc: "subprocess.Popen[bytes]", timeout: float, grace: float = 600.0) -> "int | str":
    """``proc``'s exit status, or ``"timeout"`` once it outlived ``timeout`` wall seconds. A contestant
    stopped (the timeout, or the driver interrupted) gets SIGTERM, on which a Stride run checkpoints (its
    replay buffer too) and exits, so a continued results folder resumes it from that point rather than
    from its last periodic checkpoint; SIGKILL only if it is still there ``grace`` seconds later
    (``subprocess.run`` kills at once)."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(proc, grace)
        return "timeout"
    except BaseException:
        stop(proc, grace)
        raise


def stop(proc: "subprocess.Popen[bytes]", grace: float) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Runner:
    """Runs one contestant in a fresh subprocess and returns its JSON result (None on failure).

    ``script`` is a file name (``*.py``, relative to ``script_dir``) or a module (``bench_common.sb3_run``,
    run with ``-m``). Contestants see Stride's source first on ``PYTHONPATH``, then ``benchmarks/``
    (for ``bench_common``); the repository itself is removed, so ``--stride-ref`` code is what runs.
    """

    def __init__(self, logdir: str, timeout: float, stride_src: str, script_dir: str,
                 python: str = sys.executable, extra_path: Sequence[str] = ()) -> None:
        """``python``: the contestants' interpreter (another virtualenv's for a peer that cannot
        share one); ``extra_path``: folders put on their ``PYTHONPATH`` after ``benchmarks/``."""
        self.logdir, self.timeout, self.script_dir, self.python = logdir, timeout, script_dir, python
        pp = [x for x in os.environ.get("PYTHONPATH", "").split(os.pathsep)
              if x and os.path.abspath(x) not in (REPO, BENCH)]
        self.env = dict(os.environ, PYTHONPATH=os.pathsep.join([stride_src, BENCH, *extra_path, *pp]),
                        OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")

    def __call__(self, name: str, script: str, *args: Any) -> Optional[dict]:
        out = os.path.join(self.logdir, name + ".json")
        log = os.path.join(self.logdir, name + ".log")
        target = [os.path.join(self.script_dir, script)] if script.endswith(".py") else ["-m", script]
        cmd = [self.python, *target, *map(str, args), "--out", out]
        la0 = os.getloadavg()[0]
        t0 = time.time()
        print(f"  [{time.strftime('%H:%M:%S')}] {name} ...", end="", flush=True)
        with open(log, "a") as f:  # a continued run's log goes on
            proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=self.env, cwd=self.logdir)
            rc = stop_after(proc, self.timeout)
        wall = time.time() - t0
        if rc != 0 or not os.path.exists(out):
            print(f" FAILED (rc={rc}, {wall:.0f}s wall); see {log}", flush=True)
            with open(log) as f:
                tail = f.read()[-1500:]
            print("    | " + tail.replace("\n", "\n    | "), flush=True)
            return None
        with open(out) as f:
            r = json.load(f)
        r["_wall_s"], r["_load1_before"], r["_load1_after"] = wall, la0, os.getloadavg()[0]
        print(f" done ({wall:.0f}s wall, load1 {la0:.2f}->{r['_load1_after']:.2f})", flush=True)
        return r


def median_or_inf(xs: Iterable[Optional[float]]) -> Optional[float]:
    """Median with ``None`` (not reached) counted as +inf; None for no values."""
    xs = [math.inf if x is None else x for x in xs]
    return statistics.median(xs) if xs else None


def fmt(x: Any, spec: str = "{:.1f}") -> str:
    """``spec`` formatted, ``n/a`` for None, ``not reached`` for +inf."""
    if x is None:
        return "n/a"
    if isinstance(x, float) and math.isinf(x):
        return "not reached"
    return spec.format(x)


def verdict(value: Optional[float], target: float, op: str) -> str:
    """``MET`` / ``NOT MET`` for ``value <op> target`` (op ``<=`` or ``>=``); ``n/a`` without a finite value."""
    if value is None or (isinstance(value, float) and (math.isinf(value) or math.isnan(value))):
        return "n/a"
    ok = value <= target if op == "<=" else value >= target
    return "MET" if ok else "NOT MET"
