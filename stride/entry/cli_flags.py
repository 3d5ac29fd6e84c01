"""The ``stride`` command's flags: their definitions (``stride -h``), the types of their values, and
the checks of their combinations against the mode (:data:`~.cli.MODES`) -- each refusal one line
naming the bad value and the valid choices, before anything is read or run."""

from __future__ import annotations

import argparse
import ast
import math
import re
from typing import Any, List, Mapping, Tuple

from .cli_modes import MODE_FLAGS, Mode
from .usage import OneLineParser


MAX_SEED = 2**32 - 1  # NumPy's SeedSequence and torch take any such seed


def _count(text: str) -> int:
    """A positive whole number of steps or iterations (``20000``, ``2e4``); nan, inf, 0 and
    fractions are refused."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 1 or not value.is_integer():
        raise argparse.ArgumentTypeError(f"{text!r} must be a whole number >= 1")
    return int(value)


def _seed(text: str) -> int:
    """A seed: a whole number in [0, 2**32 - 1]."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{value} is outside [0, {MAX_SEED}]")
    return value


def _seconds(text: str) -> float:
    """A duration in seconds: a finite number > 0 (``-m dist --wait``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number of seconds > 0")
    return value


#: one ``--set``: the dotted key's parts and the value
Setting = Tuple[List[str], object]


def _setting(text: str) -> Setting:
    """``KEY=VALUE`` -> ``(["a", "b"], value)``; the value is a Python literal (``3e-4``, ``[64, 64]``,
    ``None``, ``True``) or else the string itself."""
    key, sep, raw = text.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", key.strip()):
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE with a dotted key (e.g. policy.learn.learning_rate=3e-4)")
    try:
        value = ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError):
        value = raw.strip()
    return key.strip().split("."), value


def usage_error(message: str) -> Exception:
    """A user's mistake in the command: one line, exit code 2."""
    from ..utils.errors import ConfigError

    return ConfigError(message)


EPILOG = """Examples:
  stride -m serial -e cartpole -p dqn -s 0
  stride -m serial -c cartpole_dqn_config.py -s 0
  stride -m serial --resume cartpole_dqn_seed0
  stride -m eval --load cartpole_dqn_seed0 --episodes 100
  stride -m collect_demo -e cartpole -p ppo --ckpt cartpole_ppo_seed0 --episodes 10 --out demos
  stride -m offline -e cartpole -p bc -s 0  (from the dataset at policy.collect.data_path)
  stride -m league -c stride/zoo/pettingzoo/config/tictactoe_league_config.py -s 0 --env-step 200000
    (--workers 2: two collector actors on Ray, the league in this process)
  stride -m parallel -c stride/zoo/cartpole/config/parallel/cartpole_dqn_config.py -s 0
  stride -m dist --module config -p local -c cfg.py -s 0 --address HEAD:PORT  (then --module learner,
    collector, coordinator -c cfg.py.json; see docs/pipelines/ray.md)
  stride plot cartpole_dqn_seed* cartpole_ppo_seed* --out curves.png  (learning curves: the seeds'
    mean and 95 % bootstrap band from each run's progress.csv; stride plot -h)

A -c config file is Python and is executed: only use files you trust. --resume reads the
experiment's total_config.json (data only) and its latest checkpoint, and keeps the run's
--env-step / --train-iter limits unless given again. Exit codes: 0 done, 2 bad usage or
input, 1 the machine refused (disk full, read-only folder), 130 / 143 interrupted by
SIGINT / SIGTERM (a checkpoint is saved first; resume to continue)."""


def _description(modes: Mapping[str, Mode]) -> str:
    """The head of ``stride -h``: every mode of ``modes``, what it does and the flags it takes."""
    lines = ["Train reinforcement-learning agents with Stride.", "", "modes (-m MODE, default serial):"]
    for mode in modes.values():
        lines += [f"  {mode.name:<20} {mode.help}", f"  {'':<20}   {mode.synopsis()}"]
    return "\n".join(lines)


def parser(modes: Mapping[str, Mode]) -> argparse.ArgumentParser:
    """The ``stride`` command's flags, ``stride -h`` listing ``modes`` (:data:`~.cli.MODES`)."""
    p = OneLineParser(prog="stride", description=_description(modes), epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--mode", default="serial", help=f"the mode (above); one of: {', '.join(modes)}")
    p.add_argument("-e", "--env", help="zoo environment name, e.g. cartpole (with -p)")
    p.add_argument("-p", "--policy", help="policy name, e.g. dqn (with -e); -m dist: the platform, local, slurm or k8s")
    p.add_argument("-c", "--config", help="a config .py file defining main_config and create_config")
    p.add_argument("-s", "--seed", type=_seed, nargs="+", action="extend",
                   help=f"seed(s) in [0, {MAX_SEED}]; several seeds run one after another (default 0; -m eval: "
                        "the eval envs' seed, default the run's seed + 10000)")
    p.add_argument("--train-iter", type=_count, default=None,
                   help="stop after this many train iterations (--resume: the run's own limit unless given)")
    p.add_argument("--env-step", type=_count, default=None,
                   help="stop after this many env steps, the random warm-up's included: the run stops at the first "
                        "collect that reaches it, so passes it by less than one collect (--resume: the run's own "
                        "limit unless given)")
    p.add_argument("--set", dest="settings", type=_setting, action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, checked like the config file (repeatable), e.g. "
                        "--set policy.learn.learning_rate=3e-4; recorded in the saved configs")
    p.add_argument("--exp-name", default=None,
                   help="experiment folder (default: <config exp_name>_seed<S>; never overwritten: _1, _2... appended)")
    p.add_argument("--resume", default=None, metavar="PATH",
                   help="continue from an experiment folder (its latest checkpoint) or a checkpoint file, in the "
                        "mode that made the run (run.json; another mode is refused)")
    p.add_argument("--no-progress", action="store_true", help="don't show the progress bar")
    p.add_argument("--workers", type=_count, default=None, metavar="N",
                   help="on Ray (stride-rl[dist]), default 1: no Ray. -m league: N collector actors, the league "
                        "in this process (a resumed run keeps its number); -m tune: trials at once, as Ray tasks "
                        "sharing the study's storage (--address runs them on a running cluster)")
    _eval_flags(p)
    _dist_flags(p.add_argument_group("-m dist (a running Ray cluster; -p local|slurm|k8s names the platform)"))
    _tune_flags(p.add_argument_group("-m tune (Optuna; needs stride-rl[tune])"))
    p.add_argument("-v", "--version", action="store_true", help="print the version and exit")
    return p


def _eval_flags(p: argparse.ArgumentParser) -> None:
    """The flags of -m eval and -m collect_demo."""
    p.add_argument("--load", default=None, metavar="PATH",
                   help="-m eval: the experiment folder (its latest checkpoint) or checkpoint file to evaluate")
    p.add_argument("--episodes", type=_count, default=None,
                   help="-m eval: evaluation episodes (default: the config's env.n_evaluator_episode); "
                        "-m collect_demo: whole episodes to record")
    p.add_argument("--replay-path", default=None, metavar="DIR",
                   help="-m eval: write one mp4 per evaluated episode under DIR/env<i>/ (needs stride-rl[video])")
    p.add_argument("--ckpt", default=None, metavar="PATH",
                   help="-m collect_demo: the expert's checkpoint file or experiment folder (its latest checkpoint)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="-m collect_demo: the dataset folder to write (Minari format; default <exp_name>_demo_seed<S>)")


def _dist_flags(dist: Any) -> None:
    dist.add_argument("--module", default=None,
                      help="config (compile -c CFG.py into CFG.py.json), learner, collector (join and serve that "
                           "role), coordinator (drive the run); none: every role at once on --address")
    dist.add_argument("--module-name", default=None, help="learner|collector: the role's name, e.g. collector0")
    dist.add_argument("--address", default=None, metavar="HOST:PORT",
                      help="the Ray head (default: the dist config's system_config.address, then RAY_ADDRESS)")
    dist.add_argument("--learner-host", nargs="+", default=[], metavar="HOST", help="-p slurm: the learner's node")
    dist.add_argument("--collector-host", nargs="+", default=[], metavar="HOST",
                      help="-p slurm: the collectors' nodes (collectors spread round-robin)")
    dist.add_argument("--image", default=None, help="-p k8s: the pods' container image (stride-rl[dist] installed)")
    dist.add_argument("--volume-claim", default=None, metavar="NAME",
                      help="-p k8s: the PersistentVolumeClaim (ReadWriteMany) mounted for the run folders")
    dist.add_argument("--wait", type=_seconds, default=None, metavar="SECONDS",
                      help="the limit on joining, in seconds (default 120): coordinator: the connection and "
                           "the roles; learner|collector: the connection and the role's actor start")


def _tune_flags(tune: Any) -> None:
    tune.add_argument("--trials", type=_count, default=None, help="finished trials the study should hold (resumes)")
    tune.add_argument("--storage", default=None, metavar="URL",
                      help="Optuna storage (default sqlite:///<exp-name>/study.db); the same storage resumes the study")
    tune.add_argument("--trial-cpu", type=float, default=60.0, metavar="SECONDS",
                      help="a trial's train CPU-seconds budget (default 60); --env-step caps its env steps")
    tune.add_argument("--trial-seeds", type=_count, default=1, metavar="K",
                      help="runs per trial (seeds S..S+K-1), scored by their median (default 1)")
    tune.add_argument("--keep-checkpoints", action="store_true",
                      help="every trial keeps its checkpoints (default: only the best trial's)")


def check_flags(mode: Mode, args: argparse.Namespace, modes: Mapping[str, Mode]) -> None:
    """Refuse, in one line, a flag the mode does not take, a second seed where it takes one, a
    ``--set`` on a resumed run and a missing flag the mode needs (before anything is read)."""
    for flag, dest in MODE_FLAGS.items():
        if getattr(args, dest) is not None and flag not in mode.takes:
            why = mode.why.get(flag)
            takers = [f"-m {m.name}" for m in modes.values() if flag in m.takes]
            raise usage_error(f"-m {mode.name} takes no {flag} ({why})" if why else
                              f"{flag} is for {_listed(takers)}, not -m {mode.name}")
    if args.resume and args.settings:
        raise usage_error("--set cannot change a resumed run (its saved config is what it was started with); "
                          "start a new run instead")
    if not mode.seeds and args.seed and len(args.seed) > 1:
        raise usage_error(f"-m {mode.name} takes one seed, got {args.seed}")
    if any(not getattr(args, need.split()[0][2:].replace("-", "_")) for need in mode.needs):
        raise usage_error(f"-m {mode.name} needs {_listed(list(mode.needs))}")


def _listed(items: List[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def dist_reads_config(args: argparse.Namespace) -> bool:
    """``-m dist``'s own flags: ``-p`` names the platform; ``--module config`` and the short form read
    ``-c`` CONFIG.py, the other modules take the dist ``.json`` that ``--module config`` wrote."""
    from .parallel import dist

    platform = args.policy or "local"  # -p names the platform in -m dist, as in the seeds
    if platform not in dist.PLATFORMS:
        raise usage_error(f"unknown platform -p {platform!r} for -m dist; valid choices: {', '.join(dist.PLATFORMS)}")
    if args.module is not None and args.module not in dist.MODULES:
        raise usage_error(f"unknown --module {args.module!r}; valid choices: {', '.join(dist.MODULES)}")
    if args.resume:  # the run's saved config; its roles start as before, from the data file
        if args.module not in (None, "coordinator"):
            raise usage_error(f"--resume is for --module coordinator (or the short form), not --module {args.module}: "
                              f"a resumed run's {args.module} starts as before, with -c DATA.json")
        if args.config and (args.module is None or not args.config.endswith(".json")):
            raise usage_error(f"-c {args.config!r} with --resume: the run goes on with its saved config; valid "
                              "choices: no -c, or (--module coordinator) the run's dist .json data file")
        return False
    if not args.config:
        raise usage_error("-m dist needs -c CONFIG (a config .py; a dist .json for learner, collector, coordinator)")
    if args.module not in (None, "config"):
        return False
    if args.config.endswith(".json"):
        raise usage_error(f"'{args.config}' is a dist data file: give it to --module learner|collector|coordinator; "
                          "--module config and the short form take the config .py")
    return True
