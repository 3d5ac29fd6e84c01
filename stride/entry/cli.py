"""The ``stride`` command (DI-engine's ``ding`` flags).

    stride -m serial -e cartpole -p dqn -s 0
    stride -m serial -c my_config.py -s 0 --env-step 100000 --set policy.learn.learning_rate=3e-4

Its modes are one table, :data:`MODES`: each row names the entry it calls and the flags it takes,
and ``stride -h``, the errors' valid choices and the dispatch are all read from it. A command's
config is read once, its ``--set`` written in once and its experiment names decided once
(:func:`_load`), then the mode's entry runs (:func:`_run`). More examples: :data:`EPILOG`.

Every user error (unknown env or policy, missing config file, mistyped config key or value out of
range, bad flag value, action outside the action space...) ends with one line naming the bad value
and the valid choices, exit code 2; a refusal of the machine (disk full, read-only folder) is one
line too, exit code 1. SIGINT / SIGTERM save a checkpoint and exit with 130 / 143.
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib
import math
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Tuple

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


def apply_settings(main: Dict[str, object], settings: List[Setting]) -> Dict[str, object]:
    """``main`` with each ``--set`` written at its dotted key; the merge with the defaults then
    checks them like a config file's (unknown keys, types and ranges)."""
    for path, value in settings:
        if path[0] == "system_config":
            modes = " or ".join(f"-m {mode.name}" for mode in MODES.values() if mode.config == FILE)
            raise _usage(f"--set {'.'.join(path)}: only a parallel config has a system_config; valid choices: "
                         f"{modes} (else a key of main_config, e.g. policy.learn.batch_size)")
        node = main
        for k in path[:-1]:
            child = node.get(k)
            if child is None:
                child = node[k] = {}
            elif not isinstance(child, dict):
                raise _usage(f"--set {'.'.join(path)}: '{k}' holds {child!r}, not a section")
            node = child
        node[path[-1]] = value
    return main


def _usage(message: str) -> Exception:
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


def _description() -> str:
    """The head of ``stride -h``: every mode of :data:`MODES`, what it does and the flags it takes."""
    lines = ["Train reinforcement-learning agents with Stride.", "", "modes (-m MODE, default serial):"]
    for mode in MODES.values():
        lines += [f"  {mode.name:<20} {mode.help}", f"  {'':<20}   {mode.synopsis()}"]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="stride", description=_description(), epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--mode", default="serial", help=f"the mode (above); one of: {', '.join(MODES)}")
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


#: how a mode is given its config (shown as such in ``stride -h``)
ZOO, FILE, NONE = "-c CONFIG_FILE | -e ENV -p POLICY", "-c CONFIG_FILE", ""


class Loaded(NamedTuple):
    """A mode's config, read once: ``[main, create]`` (a ``FILE`` mode's: ``[main, create, system]``)
    with ``--set`` written in, and each seed with the name of its experiment folder."""

    config: List[Any]
    runs: List[Tuple[int, str]]


#: hands the flags and the loaded config (None: ``--resume``, or a mode that reads none) to the entry
Runner = Callable[["Mode", argparse.Namespace, Optional[Loaded]], int]


def _train(mode: Mode, args: argparse.Namespace, cfg: Optional[Loaded]) -> int:
    """A training pipeline: the resumed run, or each seed in turn; an interrupt ends the command."""
    kw: Dict[str, Any] = {"progress": not args.no_progress}
    if "--train-iter" in mode.takes:
        kw["max_train_iter"] = args.train_iter
    if "--env-step" in mode.takes:
        kw["max_env_step"] = args.env_step
    if "--workers" in mode.takes:
        kw["workers"] = args.workers or 1
    pipeline = mode.entry_point()
    if cfg is None:  # --resume: the run's saved config
        return _finish(mode.name, pipeline(None, resume=args.resume, **kw).result)
    for seed, exp_name in cfg.runs:
        code = _finish(mode.name, pipeline(cfg.config, seed=seed, exp_name=exp_name, **kw).result)
        if code:
            return code
    return 0


@dataclass(frozen=True)
class Mode:
    """One ``-m`` mode: the entry it calls and the flags it takes. ``stride -h``, the errors' valid
    choices and the dispatch all read :data:`MODES`, so a mode is added (or given a flag) in one row."""

    name: str
    entry: str  # "module:function" (or a module) under stride.entry, imported when the run starts
    help: str  # one line of stride -h
    run: Runner = _train  # how the flags and the loaded config are handed to the entry
    config: str = ZOO  # how the config is given: ZOO, FILE (with its system_config) or NONE
    takes: Tuple[str, ...] = ("--train-iter", "--env-step")  # which of MODE_FLAGS it takes
    seeds: bool = True  # several seeds (-s 0 1 2) run one after another; else one seed
    needs: Tuple[str, ...] = ()  # flags it cannot run without ("--load PATH (what it is)")
    why: Mapping[str, str] = field(default_factory=dict)  # flag -> why this mode takes none
    check: Optional[Callable[[argparse.Namespace], bool]] = None  # its own flags; False: -c is no config

    def entry_point(self) -> Any:
        """The entry's function (or module), imported now: torch and Ray load only once a run starts."""
        module, _, name = self.entry.partition(":")
        found = importlib.import_module(f"{__package__}.{module}")
        return getattr(found, name) if name else found

    def synopsis(self) -> str:
        """What ``stride -h`` lists under the mode: how its config is given and which flags it takes."""
        given = [self.config, *(need.split(" (")[0] for need in self.needs), "-s S [S ...]" if self.seeds else "-s S"]
        return ", ".join(part for part in (*given, *self.takes) if part)


#: the flags that only some modes take (Mode.takes), by their dest
MODE_FLAGS = {"--workers": "workers", "--resume": "resume", "--train-iter": "train_iter", "--env-step": "env_step"}


def _check_flags(mode: Mode, args: argparse.Namespace) -> None:
    """Refuse, in one line, a flag the mode does not take, a second seed where it takes one, a
    ``--set`` on a resumed run and a missing flag the mode needs (before anything is read)."""
    for flag, dest in MODE_FLAGS.items():
        if getattr(args, dest) is not None and flag not in mode.takes:
            why = mode.why.get(flag)
            takers = [f"-m {m.name}" for m in MODES.values() if flag in m.takes]
            raise _usage(f"-m {mode.name} takes no {flag} ({why})" if why else
                         f"{flag} is for {_listed(takers)}, not -m {mode.name}")
    if args.resume and args.settings:
        raise _usage("--set cannot change a resumed run (its saved config is what it was started with); "
                     "start a new run instead")
    if not mode.seeds and args.seed and len(args.seed) > 1:
        raise _usage(f"-m {mode.name} takes one seed, got {args.seed}")
    if any(not getattr(args, need.split()[0][2:].replace("-", "_")) for need in mode.needs):
        raise _usage(f"-m {mode.name} needs {_listed(list(mode.needs))}")


def _listed(items: List[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _load(mode: Mode, args: argparse.Namespace) -> Optional[Loaded]:
    """The mode's config read once (``-c`` FILE or the zoo's ``-e``/``-p``), ``--set`` written in
    once and each seed's experiment folder named once; None where the mode reads no config
    (``--resume``: the run's saved one)."""
    reads = mode.check(args) if mode.check else True
    if args.resume or not mode.config or not reads:
        return None
    from .utils import read_config_file, zoo_config

    if args.config:
        parts = read_config_file(args.config)
        default_name = os.path.splitext(os.path.basename(args.config))[0].replace("_config", "")
    elif mode.config == FILE:
        raise _usage(f"-m {mode.name} needs -c CONFIG_FILE (a config with a system_config, e.g. "
                     "stride/zoo/cartpole/config/parallel/cartpole_dqn_config.py)")
    elif args.env and args.policy:
        main, create = zoo_config(args.env, args.policy)
        parts, default_name = {"main_config": main, "create_config": create}, f"{args.env}_{args.policy}"
    else:
        raise _usage("give either -c CONFIG_FILE or both -e ENV and -p POLICY (see stride -h)")
    config = _with_settings(parts, args.settings, system=mode.config == FILE)
    seeds = args.seed or [0]
    # a config saved by a run (formatted_total_config.py) names the run's folder, <name>_seed<S>:
    # its seed suffix is replaced, never doubled (name_seed1_seed1)
    base = _SEED_SUFFIX.sub("", str(args.exp_name or config[0].get("exp_name", default_name)))
    return Loaded(config, [(s, args.exp_name if args.exp_name and len(seeds) == 1 else f"{base}_seed{s}")
                           for s in seeds])


def _with_settings(parts: Mapping[str, Any], settings: List[Setting], system: bool) -> List[Any]:
    """``[main, create]`` with each ``--set`` written in (:func:`apply_settings`); with ``system``,
    ``[main, create, system]``, the ``system_config.KEY`` ones written into the config file's
    system_config (checked later, like the file's)."""
    in_system = [(path[1:], value) for path, value in settings if system and path[0] == "system_config"]
    if any(not path for path, _ in in_system):
        raise _usage("--set system_config=...: give one key, e.g. --set system_config.collector_num=4")
    in_main = [(path, value) for path, value in settings if not (system and path[0] == "system_config")]
    config = [apply_settings(copy.deepcopy(parts["main_config"]), in_main), parts["create_config"]]
    if system:
        system_config = parts.get("system_config") or {}
        written = in_system and isinstance(system_config, dict)
        config.append(apply_settings(copy.deepcopy(system_config), in_system) if written else system_config)
    return config


_SEED_SUFFIX = re.compile(r"_seed\d+(_\d+)?$")


def _finish(mode: str, result: Dict[str, Any]) -> int:
    """Report a run; its exit code (130 / 143 where a signal interrupted it)."""
    from .run_state import EXIT_CODES

    _report(result, mode)
    return EXIT_CODES.get(str(result.get("signal")), 130) if result.get("interrupted") else 0


def _eval(mode: Mode, args: argparse.Namespace, cfg: Optional[Loaded]) -> int:
    """``-m eval --load PATH``: a fresh evaluation of a run's policy, summarised."""
    r = mode.entry_point()(args.load, n_episode=args.episodes, seed=args.seed[0] if args.seed else None,
                           replay_path=args.replay_path)
    verdict = "" if r["stop_value"] is None else \
        f"; stop value {r['stop_value']:g}: {'reached' if r['reached'] else 'NOT reached'}"
    print(f"stride: evaluated {r['checkpoint']} (train_iter={r['train_iter']} env_step={r['envstep']}) over "
          f"{r['n_episode']} episodes, eval envs seeded {r['seed']}: mean {r['mean']:.2f} +- {r['std']:.2f} "
          f"(min {r['min']:.1f}, max {r['max']:.1f}){verdict}")
    print(f"stride: returns in {r['result_file']}")
    if args.replay_path:
        print(f"stride: episode videos under {args.replay_path}")
    return 0


def _collect_demo(mode: Mode, args: argparse.Namespace, cfg: Optional[Loaded]) -> int:
    """``-m collect_demo``: the expert's (``--ckpt``) greedy episodes written as a Minari dataset (``--out``)."""
    assert cfg is not None  # a ZOO mode that does not resume
    path = mode.entry_point()(cfg.config, cfg.runs[0][0], args.ckpt, n_episode=args.episodes, out_dir=args.out)
    from ..data.demo import load_demo_dataset

    data = load_demo_dataset(path)
    print(f"stride: wrote {len(data.lengths)} episodes ({len(data)} transitions, return mean "
          f"{data.returns.mean():.2f} min {data.returns.min():.1f} max {data.returns.max():.1f}) to {path}")
    return 0


def _tune(mode: Mode, args: argparse.Namespace, cfg: Optional[Loaded]) -> int:
    """``-m tune -e ENV -p POLICY --trials N``: search, then print where the best config is."""
    from .run_state import EXIT_CODES

    assert cfg is not None  # a ZOO mode that does not resume
    try:
        result = mode.entry_point()(cfg.config, trials=args.trials, seed=cfg.runs[0][0], storage=args.storage,
                                    out_dir=args.exp_name, trial_cpu_s=args.trial_cpu, max_env_step=args.env_step,
                                    trial_seeds=args.trial_seeds, workers=args.workers or 1, address=args.address,
                                    keep_checkpoints=args.keep_checkpoints)
    except KeyboardInterrupt as e:  # the interrupted trial's values run again first
        print(f"stride: interrupted; resume with: {_tune_command(args, cfg.runs[0][0])}")
        return EXIT_CODES.get(str(e), 130)
    what = "train CPU-seconds to the confirmed stop value" if result["best_reached"] else "no trial confirmed the stop value; penalty"
    print(f"stride: {result['n_finished']} trials in study '{result['study_name']}' ({result['storage']}); "
          f"best: trial {result['best_trial']}, {what} {result['best_value']:.2f}")
    print(f"stride: best config: {result['best_config']}")
    print(f"stride: run it: {result['best_command']}")
    return 0


def _tune_command(args: argparse.Namespace, seed: int) -> str:
    """The ``-m tune`` command given (its config file and folder as absolute paths): run again, it
    resumes the study."""
    import shlex

    given = ["-c", os.path.abspath(args.config)] if args.config else ["-e", args.env, "-p", args.policy]
    argv = ["stride", "-m", "tune", *given, "--trials", str(args.trials), "-s", str(seed),
            "--trial-cpu", repr(args.trial_cpu), "--trial-seeds", str(args.trial_seeds)]
    for flag, value in (("--exp-name", args.exp_name and os.path.abspath(args.exp_name)), ("--storage", args.storage),
                        ("--env-step", args.env_step), ("--workers", args.workers), ("--address", args.address)):
        argv += [flag, str(value)] if value is not None else []
    argv += ["--keep-checkpoints"] if args.keep_checkpoints else []
    for path, value in args.settings:
        argv += ["--set", f"{'.'.join(path)}={value!r}"]
    return shlex.join(argv)


def _dist_reads_config(args: argparse.Namespace) -> bool:
    """``-m dist``'s own flags: ``-p`` names the platform; ``--module config`` and the short form read
    ``-c`` CONFIG.py, the other modules take the dist ``.json`` that ``--module config`` wrote."""
    from .parallel import dist

    platform = args.policy or "local"  # -p names the platform in -m dist, as in the seeds
    if platform not in dist.PLATFORMS:
        raise _usage(f"unknown platform -p {platform!r} for -m dist; valid choices: {', '.join(dist.PLATFORMS)}")
    if args.module is not None and args.module not in dist.MODULES:
        raise _usage(f"unknown --module {args.module!r}; valid choices: {', '.join(dist.MODULES)}")
    if not args.config:
        raise _usage("-m dist needs -c CONFIG (a config .py; a dist .json for learner, collector, coordinator)")
    if args.module not in (None, "config"):
        return False
    if args.config.endswith(".json"):
        raise _usage(f"'{args.config}' is a dist data file: give it to --module learner|collector|coordinator; "
                     "--module config and the short form take the config .py")
    return True


def _dist(mode: Mode, args: argparse.Namespace, cfg: Optional[Loaded]) -> int:
    """``-m dist``: the seeds' ``--module`` forms and the short form (see :mod:`.parallel.dist`)."""
    dist = mode.entry_point()
    wait = dist.WAIT_SECONDS if args.wait is None else args.wait
    if args.policy == "k8s":  # a manifest only: checked before anything is written
        from .parallel import k8s

        system = cfg.config[2] if cfg is not None else None
        k8s.check_k8s_flags(args.module, args.image, args.volume_claim,
                            args.address or (system.get("address") if isinstance(system, dict) else None))
    if args.module in ("learner", "collector"):
        ended = dist.serve_role(args.config, args.module, args.module_name, args.address, wait)
        print(f"stride: {ended['actor']} ended: {ended['ended']}")
        return 0
    if args.module == "coordinator":
        policy = dist.run_coordinator(args.config, args.address, wait, args.train_iter, args.env_step,
                                      not args.no_progress)
        return _finish(mode.name, policy.result)
    assert cfg is not None  # --module config and the short form read the config
    (main, create, system), (seed, exp_name) = cfg.config, cfg.runs[0]
    if args.address and isinstance(system, dict):  # (a system_config that is no dict is refused by the entry)
        system = {**system, "address": args.address}
    if args.module is None:
        policy = dist.run_all(args.config, seed, main, create, system, exp_name, args.address,
                              args.train_iter, args.env_step, not args.no_progress)
        return _finish(mode.name, policy.result)
    out = dist.compile_dist_config(args.config, seed, main, create, system, exp_name)
    print(f"stride: dist config written to {os.path.abspath(out)}")
    if args.policy == "k8s":
        print("\n".join(k8s.write_rayjob(out, args.image, args.volume_claim)[1]))
    if (args.policy or "local") == "slurm":
        from .parallel.system import compile_system_config

        system_cfg = compile_system_config(system)
        address = dist.resolve_address(args.address, system_cfg)
        print("\n".join(dist.slurm_lines(out, address, args.learner_host, args.collector_host,
                                         int(system_cfg.collector_num))))
    return 0


#: every mode of the command, in the order stride -h lists them
MODES: Dict[str, Mode] = {mode.name: mode for mode in (
    Mode("serial", "serial_entry:serial_pipeline", "train; policy.on_policy picks the loop, a reward_model trains too",
         takes=("--resume", "--train-iter", "--env-step")),
    Mode("serial_onpolicy", "serial_entry_onpolicy:serial_pipeline_onpolicy", "train an on-policy agent (PPO, A2C...)",
         takes=("--resume", "--train-iter", "--env-step")),
    Mode("serial_reward_model", "serial_entry_reward_model:serial_pipeline_reward_model",
         "train with the config's reward model (insists on a reward_model section)",
         takes=("--resume", "--train-iter", "--env-step")),
    Mode("eval", "eval_entry:eval_pipeline", "a fresh evaluation of a run's policy (--episodes, --replay-path)",
         run=_eval, config=NONE, needs=("--load PATH (an experiment folder or a checkpoint file)",), takes=(),
         seeds=False, why={"--resume": "give the run to evaluate with --load"}),
    Mode("parallel", "parallel.pipeline:parallel_pipeline", "train on Ray (stride-rl[dist]), collectors and "
         "learner overlapping", config=FILE,
         takes=("--resume", "--train-iter", "--env-step"),
         why={"--workers": "its collectors are system_config.collector_num"}),
    Mode("dist", "parallel.dist", "train on a running Ray cluster, a process per --module "
         "(docs/pipelines/ray.md)", run=_dist, config=FILE, seeds=False, check=_dist_reads_config),
    Mode("collect_demo", "collect_demo:collect_demo_data", "record an expert's greedy episodes as a Minari dataset "
         "(--out DIR)", run=_collect_demo, takes=(), seeds=False,
         needs=("--ckpt PATH (the expert's checkpoint or experiment folder)", "--episodes N")),
    Mode("offline", "serial_entry_offline:serial_pipeline_offline", "train from the dataset at "
         "policy.collect.data_path", takes=("--resume", "--train-iter"),
         why={"--env-step": "it never steps an env to train: use --train-iter"}),
    Mode("league", "league_entry:league_pipeline", "self-play with a league (--workers N: N collector actors on Ray)",
         takes=("--resume", "--env-step", "--workers"), why={"--train-iter": "its limit is --env-step"}),
    Mode("tune", "tune:tune_pipeline", "search hyper-parameters with Optuna (stride-rl[tune]); prints the best "
         "config", run=_tune, takes=("--env-step", "--workers"), seeds=False,
         needs=("--trials N (the finished trials the study should hold)",),
         why={"--resume": "run the same command again to resume",
              "--train-iter": "a trial's budget is --trial-cpu; --env-step caps its env steps"}),
)}


def _run(args: argparse.Namespace) -> int:
    """Dispatch through :data:`MODES`: the flags checked, the config loaded once, the mode's entry run."""
    mode = MODES.get(args.mode)
    if mode is None:
        raise _usage(f"unknown mode '{args.mode}'; valid choices: {', '.join(MODES)}")
    _check_flags(mode, args)
    return mode.run(mode, args, _load(mode, args))


def _report(result: Dict[str, Any], mode: str) -> None:
    from .run_state import eval_command, interrupted_note

    exp = result["exp_dir"]
    if exp is None:  # a learner replica other than rank 0 (policy.learn.multi_gpu): rank 0 reports the run
        return
    ret = result["eval_return"]
    if result.get("already_finished"):
        reached = "reached the stop value" if result["stop"] else "stopped at its step/iteration limit"
        print(f"stride: {exp} already finished ({reached} at env_step={result['env_step']} "
              f"train_iter={result['train_iter']}); nothing to resume (give a larger --env-step / --train-iter "
              "to train further)")
        return
    if result.get("interrupted"):
        status = f"interrupted ({result.get('signal') or 'SIGINT'})"
    elif result["stop"]:
        status = "reached the stop value"
    else:
        status = "stopped at the step/iteration limit"
    print(f"stride: {status}: env_step={result['env_step']} train_iter={result['train_iter']} "
          f"eval_return={'-' if ret is None else f'{ret:.2f}'} train_cpu={result['train_cpu_seconds']:.1f}s")
    written = [name for name in ("progress.csv", "league.csv", "result.json") if os.path.exists(os.path.join(exp, name))]
    print(f"stride: results in {os.path.abspath(exp)} (config, ckpt/, log/, {', '.join(written)})")
    if result.get("interrupted") and result.get("replicas", 1) > 1:
        print(f"stride: a run of {result['replicas']} learner replicas cannot be resumed yet; its checkpoints "
              f"load with: {eval_command(exp)} (or learn_mode.load_state_dict)")
    elif result.get("interrupted"):
        print(f"stride: {interrupted_note(mode, exp, result.get('max_env_step'), result.get('max_train_iter'))}")


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the ``stride`` command; returns the exit code. ``stride plot ...`` draws
    runs' learning curves (:mod:`.plot`); everything else trains, evaluates or tunes (``-m``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["plot"]:
        from . import plot

        return _guarded(lambda: _parsed(plot.main, argv[1:]))
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # -h, or a usage error already printed as one line
        return int(e.code or 0)
    if args.version:
        from .. import __version__

        print(f"stride {__version__}")
        return 0
    return _guarded(lambda: _run(args))


def _parsed(command: Callable[[List[str]], int], argv: List[str]) -> int:
    """``command(argv)``, its argparse exit (``-h``, a usage error printed as one line) as the code."""
    try:
        return command(argv)
    except SystemExit as e:
        return int(e.code or 0)


def _guarded(run: Callable[[], int]) -> int:
    """``run()``, with Stride's errors, the machine's refusals and Ctrl-C as one line and an exit code."""
    from ..utils.errors import StrideError, resource_error

    try:
        return run()
    except StrideError as e:
        print(f"stride: error: {_one_line(e)}", file=sys.stderr)
        return e.exit_code
    except OSError as e:  # the machine refused a write or a read (disk full, read-only, permissions)
        err = resource_error("write" if e.filename else "use", str(e.filename or "a file"), e)
        print(f"stride: error: {_one_line(err)}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("stride: aborted", file=sys.stderr)
        return 130


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
