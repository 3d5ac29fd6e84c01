"""The ``stride`` command (DI-engine's ``ding`` flags).

    stride -m serial -e cartpole -p dqn -s 0
    stride -m serial -c my_config.py -s 0 --env-step 100000
    stride -m serial -e cartpole -p dqn --set policy.learn.learning_rate=3e-4   # any config key
    stride -m serial --resume cartpole_dqn_seed0          # continue an interrupted run
    stride -m eval --load cartpole_dqn_seed0 --episodes 100  # a fresh evaluation of its policy
    stride -m collect_demo -e cartpole -p ppo --ckpt cartpole_ppo_seed0 --episodes 10 --out demos  # expert data
    stride -m offline -e cartpole -p bc -s 0              # train from policy.collect.data_path's dataset
    stride -m parallel -c stride/zoo/cartpole/config/parallel/cartpole_dqn_config.py -s 0  # on Ray (stride-rl[dist])
    stride -m dist --module config -p local -c cfg.py -s 0 --address HEAD:PORT  # then learner, collector, coordinator

Every user error (unknown env or policy, missing config file, mistyped config key or value out of
range, bad flag value, action outside the action space...) ends with one line naming the bad value
and the valid choices, exit code 2; a refusal of the machine (disk full, read-only folder) is one
line too, exit code 1. SIGINT / SIGTERM save a checkpoint and exit with 130 / 143.
"""

from __future__ import annotations

import argparse
import ast
import math
import os
import re
import sys
from typing import TYPE_CHECKING, Any, Dict, List, NoReturn, Optional, Tuple

if TYPE_CHECKING:  # imported for real only where a run starts (torch is slow to import)
    from ..policy.base_policy import Policy

MODES = ("serial", "serial_onpolicy", "serial_reward_model", "eval", "parallel", "dist", "collect_demo", "offline", "tune", "league")
MAX_SEED = 2**32 - 1  # NumPy's SeedSequence and torch take any such seed


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``stride: error: ...``), exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"stride: error: {message} (see stride -h)", file=sys.stderr)
        sys.exit(2)


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
            raise _usage(f"--set {'.'.join(path)}: only a parallel config has a system_config; valid choices: "
                         "-m parallel or -m dist (else a key of main_config, e.g. policy.learn.batch_size)")
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


def split_system_settings(settings: List[Setting]) -> Tuple[List[Setting], List[Setting]]:
    """``--set`` of a parallel config: (main_config's, system_config's with the prefix removed)."""
    system = [(path[1:], value) for path, value in settings if path[0] == "system_config" and len(path) > 1]
    bare = [path for path, _ in settings if path == ["system_config"]]
    if bare:
        raise _usage("--set system_config=...: give one key, e.g. --set system_config.collector_num=4")
    return [(path, value) for path, value in settings if path[0] != "system_config"], system


def _system_config(parts: Dict[str, Any], settings: List[Setting]) -> Any:
    """A config file's system_config with its ``--set`` keys written in (checked later, like the file's)."""
    system = parts.get("system_config") or {}
    return apply_settings(_copy(system), settings) if settings and isinstance(system, dict) else system


def _usage(message: str) -> Exception:
    from ..utils.errors import ConfigError

    return ConfigError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="stride",
        description="Train reinforcement-learning agents with Stride.",
        epilog="Examples:\n  stride -m serial -e cartpole -p dqn -s 0\n  stride -m serial -c cartpole_dqn_config.py -s 0\n"
               "  stride -m serial --resume cartpole_dqn_seed0\n"
               "  stride -m eval --load cartpole_dqn_seed0 --episodes 100\n"
               "  stride -m collect_demo -e cartpole -p ppo --ckpt cartpole_ppo_seed0 --episodes 10 --out demos\n"
               "  stride -m offline -e cartpole -p bc -s 0  (from the dataset at policy.collect.data_path)\n"
               "  stride -m league -c stride/zoo/pettingzoo/config/tictactoe_league_config.py -s 0 --env-step 200000\n"
               "    (--workers 2: two collector actors on Ray, the league in this process)\n"
               "  stride -m parallel -c stride/zoo/cartpole/config/parallel/cartpole_dqn_config.py -s 0\n"
               "  stride -m dist --module config -p local -c cfg.py -s 0 --address HEAD:PORT  (then --module learner,\n"
               "    collector, coordinator -c cfg.py.json; see README 'On a Ray cluster')\n\n"
               "A -c config file is Python and is executed: only use files you trust. --resume reads the\n"
               "experiment's total_config.json (data only) and its latest checkpoint, and keeps the run's\n"
               "--env-step / --train-iter limits unless given again. Exit codes: 0 done, 2 bad usage or\n"
               "input, 1 the machine refused (disk full, read-only folder), 130 / 143 interrupted by\n"
               "SIGINT / SIGTERM (a checkpoint is saved first; resume to continue).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-m", "--mode", default="serial", help=f"pipeline to run; one of: {', '.join(MODES)} (default serial)")
    p.add_argument("-e", "--env", help="zoo environment name, e.g. cartpole (with -p)")
    p.add_argument("-p", "--policy", help="policy name, e.g. dqn (with -e); -m dist: the platform, local or slurm")
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
    p.add_argument("--no-progress", action="store_true", help="don't show the progress bar")
    p.add_argument("--workers", type=_count, default=None, metavar="N",
                   help="on Ray (stride-rl[dist]), default 1: no Ray. -m league: N collector actors, the league "
                        "in this process (a resumed run keeps its number); -m tune: trials at once, as Ray tasks "
                        "sharing the study's storage (--address runs them on a running cluster)")
    dist = p.add_argument_group("-m dist (a running Ray cluster; -p local|slurm names the platform)")
    dist.add_argument("--module", default=None,
                      help="config (compile -c CFG.py into CFG.py.json), learner, collector (join and serve that "
                           "role), coordinator (drive the run); none: every role at once on --address")
    dist.add_argument("--module-name", default=None, help="learner|collector: the role's name, e.g. collector0")
    dist.add_argument("--address", default=None, metavar="HOST:PORT",
                      help="the Ray head (default: the dist config's system_config.address, then RAY_ADDRESS)")
    dist.add_argument("--learner-host", nargs="+", default=[], metavar="HOST", help="-p slurm: the learner's node")
    dist.add_argument("--collector-host", nargs="+", default=[], metavar="HOST",
                      help="-p slurm: the collectors' nodes (collectors spread round-robin)")
    dist.add_argument("--wait", type=_seconds, default=None, metavar="SECONDS",
                      help="the limit on joining, in seconds (default 120): coordinator: the connection and "
                           "the roles; learner|collector: the connection and the role's actor start")
    tune = p.add_argument_group("-m tune (Optuna; needs stride-rl[tune])")
    tune.add_argument("--trials", type=_count, default=None, help="finished trials the study should hold (resumes)")
    tune.add_argument("--storage", default=None, metavar="URL",
                      help="Optuna storage (default sqlite:///<exp-name>/study.db); the same storage resumes the study")
    tune.add_argument("--trial-cpu", type=float, default=60.0, metavar="SECONDS",
                      help="a trial's train CPU-seconds budget (default 60); --env-step caps its env steps")
    tune.add_argument("--trial-seeds", type=_count, default=1, metavar="K",
                      help="runs per trial (seeds S..S+K-1), scored by their median (default 1)")
    p.add_argument("-v", "--version", action="store_true", help="print the version and exit")
    return p


def _run(args: argparse.Namespace) -> int:
    from ..utils.errors import ConfigError

    if args.mode not in MODES:
        raise ConfigError(f"unknown mode '{args.mode}'; valid choices: {', '.join(MODES)}")
    if args.workers is not None and args.mode not in ("league", "tune"):
        raise ConfigError(f"--workers is for -m league and -m tune, not -m {args.mode} (-m parallel: the config's "
                          "system_config.collector_num)")
    from .run_state import EXIT_CODES
    from .utils import ConfigInput, read_config, zoo_config

    if args.mode == "eval":
        return _eval(args)
    if args.mode == "parallel" and not args.resume:  # a resume goes the serial way: its saved configs and limits
        return _parallel(args)
    if args.mode == "dist":
        return _dist(args)
    if args.mode == "collect_demo":
        return _collect_demo(args)
    if args.mode == "tune":
        return _tune(args)

    def pipeline(input_cfg: Optional[ConfigInput], **kw: Any) -> Policy:  # imports torch only once the input is valid
        if args.mode == "serial_reward_model":  # -m serial runs a config's reward model too; this insists on one
            from .serial_entry_reward_model import serial_pipeline_reward_model

            return serial_pipeline_reward_model(input_cfg, **kw)
        if args.mode == "offline":  # trains from policy.collect.data_path's dataset: no env steps to limit
            if kw.pop("max_env_step", None) is not None:
                raise ConfigError("-m offline takes no --env-step (it never steps an env to train): use --train-iter")
            from .serial_entry_offline import serial_pipeline_offline

            return serial_pipeline_offline(input_cfg, **kw)
        if args.mode == "league":  # self-play with a league (stride.league): runs until its env-step limit or stop rule
            if kw.pop("max_train_iter", None) is not None:
                raise ConfigError("-m league takes no --train-iter (its limit is --env-step)")
            from .league_entry import league_pipeline

            return league_pipeline(input_cfg, workers=args.workers or 1, **kw)
        if args.mode == "parallel":  # --resume only (a new run: _parallel)
            from .parallel.pipeline import parallel_pipeline

            return parallel_pipeline(input_cfg, **kw)
        if args.mode == "serial_onpolicy":
            from .serial_entry_onpolicy import serial_pipeline_onpolicy

            return serial_pipeline_onpolicy(input_cfg, **kw)
        from .serial_entry import serial_pipeline  # picks the on-policy loop itself from policy.on_policy

        return serial_pipeline(input_cfg, **kw)

    if args.resume:
        if args.settings:
            raise ConfigError("--set cannot change a resumed run (its saved config is what it was started with); "
                              "start a new run instead")
        policy = pipeline(None, max_train_iter=args.train_iter, max_env_step=args.env_step, resume=args.resume,
                          progress=not args.no_progress)
        _report(policy.result, args.mode)
        return EXIT_CODES.get(str(policy.result.get("signal")), 130) if policy.result.get("interrupted") else 0
    if args.config:
        main, create = read_config(args.config)
        default_name = os.path.splitext(os.path.basename(args.config))[0].replace("_config", "")
    elif args.env and args.policy:
        main, create = zoo_config(args.env, args.policy)
        default_name = main.get("exp_name", f"{args.env}_{args.policy}")
    else:
        raise ConfigError("give either -c CONFIG_FILE or both -e ENV and -p POLICY (see stride -h)")
    main = apply_settings(_copy(main), args.settings)
    seeds = args.seed or [0]
    # a config saved by a run (formatted_total_config.py) names the run's folder, <name>_seed<S>:
    # its seed suffix is replaced, never doubled (name_seed1_seed1)
    base = _SEED_SUFFIX.sub("", str(args.exp_name or main.get("exp_name", default_name)))
    for seed in seeds:
        exp_name = args.exp_name if args.exp_name and len(seeds) == 1 else f"{base}_seed{seed}"
        policy = pipeline([main, create], seed=seed, max_train_iter=args.train_iter, max_env_step=args.env_step,
                          exp_name=exp_name, progress=not args.no_progress)
        _report(policy.result, args.mode)
        if policy.result.get("interrupted"):
            return EXIT_CODES.get(str(policy.result.get("signal")), 130)
    return 0


_SEED_SUFFIX = re.compile(r"_seed\d+(_\d+)?$")


def _copy(obj: Any) -> Any:
    import copy

    return copy.deepcopy(obj)


def _parallel(args: argparse.Namespace) -> int:
    """``-m parallel -c cfg.py``: the config file's main, create and (optional) system config on Ray."""
    from ..utils.errors import ConfigError
    from .run_state import EXIT_CODES
    from .utils import read_config_file

    if not args.config or args.resume:
        raise ConfigError("-m parallel needs -c CONFIG_FILE (e.g. stride/zoo/cartpole/config/parallel/"
                          "cartpole_dqn_config.py), or --resume RUN")
    parts = read_config_file(args.config)
    main_settings, system_settings = split_system_settings(args.settings)
    main = apply_settings(_copy(parts["main_config"]), main_settings)
    system = _system_config(parts, system_settings)
    default_name = os.path.splitext(os.path.basename(args.config))[0].replace("_config", "")
    base = _SEED_SUFFIX.sub("", str(args.exp_name or main.get("exp_name", default_name)))
    from .parallel.pipeline import parallel_pipeline

    seeds = args.seed or [0]
    for seed in seeds:
        exp_name = args.exp_name if args.exp_name and len(seeds) == 1 else f"{base}_seed{seed}"
        policy = parallel_pipeline([main, parts["create_config"], system], seed=seed,
                                   max_train_iter=args.train_iter, max_env_step=args.env_step, exp_name=exp_name,
                                   progress=not args.no_progress)
        _report(policy.result, args.mode)
        if policy.result.get("interrupted"):
            return EXIT_CODES.get(str(policy.result.get("signal")), 130)
    return 0


def _dist(args: argparse.Namespace) -> int:
    """``-m dist``: the seeds' ``--module`` forms and the short form (see :mod:`.parallel.dist`)."""
    from ..utils.errors import ConfigError
    from .parallel import dist
    from .run_state import EXIT_CODES

    platform = args.policy or "local"  # -p names the platform in -m dist, as in the seeds
    if platform not in dist.PLATFORMS:
        raise ConfigError(f"unknown platform -p {platform!r} for -m dist; valid choices: {', '.join(dist.PLATFORMS)}")
    if args.module is not None and args.module not in dist.MODULES:
        raise ConfigError(f"unknown --module {args.module!r}; valid choices: {', '.join(dist.MODULES)}")
    if not args.config or args.resume:
        raise ConfigError("-m dist needs -c CONFIG (a config .py; a dist .json for learner, collector, coordinator) "
                          "and does not resume")
    seeds = args.seed or [0]
    if len(seeds) > 1:
        raise ConfigError(f"-m dist takes one seed, got {seeds}")
    if args.module in ("learner", "collector"):
        ended = dist.serve_role(args.config, args.module, args.module_name, args.address,
                                dist.WAIT_SECONDS if args.wait is None else args.wait)
        print(f"stride: {ended['actor']} ended: {ended['ended']}")
        return 0
    if args.module == "coordinator":
        policy = dist.run_coordinator(args.config, args.address, dist.WAIT_SECONDS if args.wait is None else args.wait,
                                      args.train_iter, args.env_step, not args.no_progress)
    else:
        parts = read_config_file_checked(args.config)
        main_settings, system_settings = split_system_settings(args.settings)
        main = apply_settings(_copy(parts["main_config"]), main_settings)
        default_name = os.path.splitext(os.path.basename(args.config))[0].replace("_config", "")
        exp_name = args.exp_name or f"{_SEED_SUFFIX.sub('', str(main.get('exp_name', default_name)))}_seed{seeds[0]}"
        system = dict(_system_config(parts, system_settings))
        if args.address:
            system["address"] = args.address
        if args.module == "config":
            out = dist.compile_dist_config(args.config, seeds[0], main, parts["create_config"], system, exp_name)
            print(f"stride: dist config written to {os.path.abspath(out)}")
            if platform == "slurm":
                from .parallel.system import compile_system_config

                address = dist.resolve_address(args.address, compile_system_config(system))
                lines = dist.slurm_lines(out, address, args.learner_host, args.collector_host,
                                         int(compile_system_config(system).collector_num))
                print("\n".join(lines))
            return 0
        policy = dist.run_all(args.config, seeds[0], main, parts["create_config"], system, exp_name, args.address,
                              args.train_iter, args.env_step, not args.no_progress)
    _report(policy.result, args.mode)
    return EXIT_CODES.get(str(policy.result.get("signal")), 130) if policy.result.get("interrupted") else 0


def read_config_file_checked(path: str) -> Dict[str, Dict[str, object]]:
    """A config ``.py`` for ``-m dist`` (a ``.json`` there is what ``--module config`` wrote)."""
    from ..utils.errors import ConfigError
    from .utils import read_config_file

    if path.endswith(".json"):
        raise ConfigError(f"'{path}' is a dist data file: give it to --module learner|collector|coordinator; "
                          "--module config and the short form take the config .py")
    return read_config_file(path)


def _eval(args: argparse.Namespace) -> int:
    from ..utils.errors import ConfigError

    if not args.load:
        raise ConfigError("-m eval needs --load PATH (an experiment folder or a checkpoint file)")
    if args.seed and len(args.seed) > 1:
        raise ConfigError(f"-m eval takes one seed, got {args.seed}")
    from .eval_entry import eval_pipeline

    r = eval_pipeline(args.load, n_episode=args.episodes, seed=args.seed[0] if args.seed else None,
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


def _collect_demo(args: argparse.Namespace) -> int:
    """``-m collect_demo``: the expert's (``--ckpt``) greedy episodes written as a Minari dataset (``--out``)."""
    from ..utils.errors import ConfigError
    from .utils import read_config, zoo_config

    if not args.ckpt or not args.episodes:
        raise ConfigError("-m collect_demo needs --ckpt PATH (the expert's checkpoint or experiment folder) and "
                          "--episodes N (e.g. -e cartpole -p ppo --ckpt cartpole_ppo_seed0 --episodes 10 --out demos)")
    if args.seed and len(args.seed) > 1:
        raise ConfigError(f"-m collect_demo takes one seed, got {args.seed}")
    if args.config:
        main, create = read_config(args.config)
    elif args.env and args.policy:
        main, create = zoo_config(args.env, args.policy)
    else:
        raise ConfigError("give either -c CONFIG_FILE or both -e ENV and -p POLICY (the expert's config; see stride -h)")
    from .collect_demo import collect_demo_data
    from ..data.demo import load_demo_dataset

    path = collect_demo_data([apply_settings(_copy(main), args.settings), create], args.seed[0] if args.seed else 0,
                             args.ckpt, n_episode=args.episodes, out_dir=args.out)
    data = load_demo_dataset(path)
    print(f"stride: wrote {len(data.lengths)} episodes ({len(data)} transitions, return mean "
          f"{data.returns.mean():.2f} min {data.returns.min():.1f} max {data.returns.max():.1f}) to {path}")
    return 0


def _tune(args: argparse.Namespace) -> int:
    """``-m tune -e ENV -p POLICY --trials N``: search, then print where the best config is."""
    from ..utils.errors import ConfigError
    from .utils import read_config, zoo_config

    if args.trials is None:
        raise ConfigError("-m tune needs --trials N (the finished trials the study should hold)")
    if args.resume or args.train_iter is not None:
        raise ConfigError("-m tune takes neither --resume (run the same command again to resume) nor --train-iter")
    if args.config:
        main, create = read_config(args.config)
    elif args.env and args.policy:
        main, create = zoo_config(args.env, args.policy)
    else:
        raise ConfigError("give either -c CONFIG_FILE or both -e ENV and -p POLICY (see stride -h)")
    if args.seed and len(args.seed) > 1:
        raise ConfigError(f"-m tune takes one seed, got {len(args.seed)}: {args.seed}")
    from .tune import tune_pipeline

    main = apply_settings(_copy(main), args.settings)
    result = tune_pipeline([main, create], trials=args.trials, seed=(args.seed or [0])[0], storage=args.storage,
                           out_dir=args.exp_name, trial_cpu_s=args.trial_cpu, max_env_step=args.env_step,
                           trial_seeds=args.trial_seeds, workers=args.workers or 1, address=args.address)
    what = "train CPU-seconds to the confirmed stop value" if result["best_reached"] else "no trial confirmed the stop value; penalty"
    print(f"stride: {result['n_finished']} trials in study '{result['study_name']}' ({result['storage']}); "
          f"best: trial {result['best_trial']}, {what} {result['best_value']:.2f}")
    print(f"stride: best config: {result['best_config']}")
    return 0


def _report(result: Dict[str, Any], mode: str) -> None:
    from .run_state import resume_command

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
              "load with -m eval --load or learn_mode.load_state_dict")
    elif result.get("interrupted"):
        command = resume_command(mode, exp, result.get("max_env_step"), result.get("max_train_iter"))
        print(f"stride: resume with: {command}")


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the ``stride`` command; returns the exit code."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # -h, or a usage error already printed as one line
        return int(e.code or 0)
    if args.version:
        from .. import __version__

        print(f"stride {__version__}")
        return 0
    from ..utils.errors import StrideError, resource_error

    try:
        return _run(args)
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
