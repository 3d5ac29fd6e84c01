"""``stride plot RUN [RUN ...]``: learning curves from runs' ``progress.csv``.

A RUN is an experiment folder (its ``progress.csv``: one seed) or a folder of them (its subfolders'
``progress.csv``: the seeds of one run). Folders named ``<name>_seed<N>`` given side by side are the
seeds of run ``<name>``, so ``stride plot cartpole_dqn_seed* cartpole_ppo_seed*`` draws two runs.
Each run is drawn as the mean over its seeds with a 95 % percentile-bootstrap band
(:mod:`stride.rl_utils.stats`), one panel per env (read from the run's ``total_config.json``);
``--metric`` picks any column, ``--x`` the axis. ``--aggregate`` draws, per algorithm, the
interquartile mean of the seeds' last values across envs with a stratified bootstrap interval, each
env's scores min-max normalised over the runs plotted (``rliable``'s estimator; Atari's human
normalisation needs scores Stride does not hold).

rl-zoo3's ``plot_train`` reads Monitor logs of training episodes, and its ``plot_from_file`` needs a
post-processed pickle; Tianshou and SB3 leave plotting to TensorBoard, which draws one seed per
line. Here a seeds' interval and the cross-env IQM come from the files every run already writes.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..rl_utils.stats import bootstrap_interval, iqm, mean_interval, step_values
from ..utils.errors import ConfigError
from ..utils.extras import import_extra
from .usage import OneLineParser

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FORMATS = ("png", "svg", "pdf")
_SEED_SUFFIX = re.compile(r"^(?P<name>.+)_seed\d+$")


@dataclass(frozen=True)
class Seed:
    """One seed's curve: the ``x`` and metric columns of its ``progress.csv`` (rows with both)."""

    folder: str
    xs: Tuple[float, ...]
    ys: Tuple[float, ...]
    #: the run reached its stop value (its ``result.json``): its policy holds its last evaluation
    #: past its end, where longer seeds go on
    finished: bool = False


@dataclass(frozen=True)
class RunCurves:
    """The seeds of one run, with the env and algorithm its saved config names ("" when absent)."""

    label: str
    env: str
    algo: str
    seeds: Tuple[Seed, ...]

    def curve(self, n_boot: int = 2000) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(grid, mean, low, high)``: the seeds read at every x any of them measured, up to the
        last x every seed still training reached (a seed that reached its stop value holds its last
        evaluation), and their mean with its 95 % bootstrap interval."""
        going = [s.xs[-1] for s in self.seeds if not s.finished]
        end = min(going) if going else max(s.xs[-1] for s in self.seeds)
        grid = np.array(sorted({x for s in self.seeds for x in s.xs if x <= end}))
        values = np.stack([step_values(s.xs, s.ys, grid) for s in self.seeds])
        known = ~np.isnan(values).any(axis=0)  # from the first x every seed has measured
        grid, values = grid[known], values[:, known]
        mean, low, high = mean_interval(values, n_boot=n_boot)
        return grid, mean, low, high

    def finals(self) -> np.ndarray:
        """Each seed's last value."""
        return np.array([s.ys[-1] for s in self.seeds])


def read_seed(folder: str, metric: str, x: str) -> Seed:
    """The ``(x, metric)`` rows of ``folder/progress.csv`` (rows where either is empty skipped)."""
    path = os.path.join(folder, "progress.csv")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        columns = list(reader.fieldnames or [])
        for name, what in ((metric, "--metric"), (x, "--x")):
            if name not in columns:
                raise ConfigError(f"{what} '{name}' is not a column of {path}; valid choices: {', '.join(columns)}")
        rows = [(float(r[x]), float(r[metric])) for r in reader if r[x] not in ("", None) and r[metric] not in ("", None)]
    rows = [(a, b) for a, b in rows if math.isfinite(a) and math.isfinite(b)]
    if not rows:
        raise ConfigError(f"{path} has no row with both '{x}' and '{metric}' (a run stopped before its first evaluation?)")
    rows.sort(key=lambda r: r[0])
    return Seed(folder, tuple(a for a, _ in rows), tuple(b for _, b in rows), _finished(folder))


def _finished(folder: str) -> bool:
    """Whether the run in ``folder`` reached its stop value (``result.json``'s ``stop``)."""
    try:
        with open(os.path.join(folder, "result.json"), encoding="utf-8") as f:
            return bool(json.load(f).get("stop"))
    except (OSError, ValueError, AttributeError):
        return False


def _names(folder: str) -> Tuple[str, str]:
    """The env and algorithm the folder's ``total_config.json`` names ("" where it has none)."""
    try:
        with open(os.path.join(folder, "total_config.json"), encoding="utf-8") as f:
            cfg: Dict[str, Any] = json.load(f)
    except (OSError, ValueError):
        return "", ""
    env, policy = cfg.get("env") or {}, cfg.get("policy") or {}
    return str(env.get("env_id") or env.get("type") or ""), str(policy.get("type") or "")


def seed_folders(path: str) -> Tuple[str, List[str]]:
    """``(label, folders)`` of a RUN argument: the folder itself when it holds ``progress.csv``,
    else its subfolders that do (sorted)."""
    path = os.path.normpath(path)
    if not os.path.isdir(path):
        raise ConfigError(f"run '{path}' is not a folder (an experiment folder, or a folder of them)")
    if os.path.isfile(os.path.join(path, "progress.csv")):
        return os.path.basename(path), [path]
    subs = sorted(os.path.join(path, d) for d in os.listdir(path)
                  if os.path.isfile(os.path.join(path, d, "progress.csv")))
    if not subs:
        raise ConfigError(f"run '{path}' holds no progress.csv, neither in it nor in its subfolders")
    return os.path.basename(path), subs


def load_runs(paths: Sequence[str], metric: str = "eval_return_mean", x: str = "envstep") -> List[RunCurves]:
    """The runs the RUN arguments name, in order of first mention; ``<name>_seed<N>`` folders
    given one by one are grouped as the seeds of ``<name>``."""
    groups: Dict[str, List[str]] = {}
    for path in paths:
        label, folders = seed_folders(path)
        if len(folders) == 1 and folders[0] == os.path.normpath(path):
            match = _SEED_SUFFIX.match(label)
            label = match.group("name") if match else label
        groups.setdefault(label, []).extend(f for f in folders if f not in groups.get(label, []))
    runs = []
    for label, folders in groups.items():
        env, algo = _names(folders[0])
        runs.append(RunCurves(label, env, algo, tuple(read_seed(f, metric, x) for f in folders)))
    return runs


def _axis_label(name: str) -> str:
    return {"envstep": "env steps", "train_iter": "train iterations", "wall_seconds": "wall seconds",
            "train_cpu_seconds": "train CPU seconds", "eval_return_mean": "evaluation return (mean)"}.get(name, name)


def plot_runs(runs: Sequence[RunCurves], metric: str = "eval_return_mean", x: str = "envstep",
              aggregate: bool = False, n_boot: int = 2000) -> "Figure":
    """A matplotlib figure of ``runs``: curves per env panel, or (``aggregate``) the per-algorithm
    IQM of normalised final values across envs with stratified bootstrap intervals."""
    import_extra("matplotlib", "plot", "stride plot's figures")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if aggregate:
        return _plot_aggregate(runs, metric, n_boot)
    envs = list(dict.fromkeys(r.env for r in runs))
    fig, axes = plt.subplots(1, len(envs), figsize=(6 * len(envs), 4.2), squeeze=False)
    for ax, env in zip(axes[0], envs):
        for run in (r for r in runs if r.env == env):
            grid, mean, low, high = run.curve(n_boot)
            n = len(run.seeds)
            # an evaluation's value holds until the next one: drawn as steps, not interpolated
            (line,) = ax.plot(grid, mean, drawstyle="steps-post", label=f"{run.label} ({n} seed{'s' if n > 1 else ''})")
            if n > 1:
                ax.fill_between(grid, low, high, step="post", color=line.get_color(), alpha=0.2, linewidth=0)
        ax.set_title(env or "runs")
        ax.set_xlabel(_axis_label(x))
        ax.set_ylabel(_axis_label(metric) + (" — mean, 95 % bootstrap band" if any(len(r.seeds) > 1 for r in runs) else ""))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def normalised_finals(runs: Sequence[RunCurves]) -> Dict[str, Dict[str, np.ndarray]]:
    """``{algo: {env: seeds' last values}}``, each env's values min-max normalised over every run
    of that env (0: the worst seed's, 1: the best's; all equal: 0)."""
    lows = {env: min(float(r.finals().min()) for r in runs if r.env == env) for env in {r.env for r in runs}}
    highs = {env: max(float(r.finals().max()) for r in runs if r.env == env) for env in lows}
    out: Dict[str, Dict[str, np.ndarray]] = {}
    for r in runs:
        span = highs[r.env] - lows[r.env]
        scores = (r.finals() - lows[r.env]) / span if span > 0 else np.zeros(len(r.seeds))
        algo = out.setdefault(r.algo or r.label, {})
        algo[r.env] = np.concatenate([algo[r.env], scores]) if r.env in algo else scores
    return out


def _plot_aggregate(runs: Sequence[RunCurves], metric: str, n_boot: int) -> "Figure":
    import matplotlib.pyplot as plt

    by_algo = normalised_finals(runs)
    fig, ax = plt.subplots(figsize=(6, 0.6 * len(by_algo) + 1.6))
    for i, (algo, by_env) in enumerate(by_algo.items()):
        point, low, high = bootstrap_interval(list(by_env.values()), iqm, n_boot=n_boot)
        ax.errorbar([point], [i], xerr=[[point - low], [high - point]], fmt="o", capsize=4)
    ax.set_yticks(range(len(by_algo)), labels=[f"{a} ({len(e)} env{'s' if len(e) > 1 else ''})" for a, e in by_algo.items()])
    ax.set_xlabel(f"IQM of the last {_axis_label(metric)}, min-max normalised per env (95 % stratified bootstrap)")
    ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig


def _parser() -> OneLineParser:
    p = OneLineParser(prog="stride plot", description=__doc__.split("\n\n")[1] if __doc__ else None)
    p.add_argument("runs", nargs="+", metavar="RUN", help="experiment folders, or folders of them (a run's seeds)")
    p.add_argument("--metric", default="eval_return_mean", help="the progress.csv column plotted (default: eval_return_mean)")
    p.add_argument("--x", default="envstep", help="the column on the x axis (default: envstep)")
    p.add_argument("--out", default="curves.png", help=f"the figure's file; its suffix picks the format: {', '.join(FORMATS)}")
    p.add_argument("--aggregate", action="store_true", help="per algorithm: the IQM across envs with stratified bootstrap intervals")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``stride plot``: write the figure, print where; returns the exit code (2: bad input)."""
    args = _parser().parse_args(argv)
    suffix = os.path.splitext(args.out)[1].lstrip(".").lower()
    if suffix not in FORMATS:
        raise ConfigError(f"--out '{args.out}': unknown format '{suffix}'; valid choices: {', '.join(FORMATS)}")
    runs = load_runs(args.runs, args.metric, args.x)
    fig = plot_runs(runs, args.metric, args.x, aggregate=args.aggregate)
    folder = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(args.out)}.part")
    fig.savefig(tmp, format=suffix, dpi=110)  # written whole, then moved: never a half-written figure
    os.replace(tmp, args.out)
    seeds = sum(len(r.seeds) for r in runs)
    print(f"stride: wrote {args.out} ({len(runs)} run{'s' if len(runs) > 1 else ''}, {seeds} seed{'s' if seeds > 1 else ''})",
          file=sys.stdout)
    return 0
