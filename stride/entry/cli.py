"""The ``stride`` command (DI-engine's ``ding`` flags).

    stride -m serial -e cartpole -p dqn -s 0
    stride -m serial -c my_config.py -s 0 --env-step 100000 --set policy.learn.learning_rate=3e-4

Its modes are one table, :data:`MODES`: each row names the entry it calls and the flags it takes,
and ``stride -h``, the errors' valid choices and the dispatch are all read from it. A command's
config is read once, its ``--set`` written in once and its experiment names decided once
(:func:`_load`), then the mode's entry runs (:func:`_run`). A mode is a :class:`~.cli_modes.Mode`; the
flags, their checks and ``stride -h`` are :mod:`.cli_flags` (more examples: its ``EPILOG``); what a
command prints when it ends is :mod:`.cli_report`.

Every user error (unknown env or policy, missing config file, mistyped config key or value out of
range, bad flag value, action outside the action space...) ends with one line naming the bad value
and the valid choices, exit code 2; a refusal of the machine (disk full, read-only folder) is one
line too, exit code 1. SIGINT / SIGTERM save a checkpoint and exit with 130 / 143.
"""

from __future__ import annotations

import argparse
import copy
import os
import re
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional

from .cli_flags import Setting, check_flags, dist_reads_config, parser, usage_error
from .cli_modes import FILE, NONE, Loaded, Mode
from .cli_report import finish, report_demo, report_eval, report_tune, tune_command


#: what ``from stride.entry.cli import ...`` offers (``apply_settings``: the benchmarks' ``--set``)
__all__ = ["main", "MODES", "Mode", "apply_settings"]


def apply_settings(main: Dict[str, object], settings: List[Setting]) -> Dict[str, object]:
    """``main`` with each ``--set`` written at its dotted key; the merge with the defaults then
    checks them like a config file's (unknown keys, types and ranges)."""
    for path, value in settings:
        if path[0] == "system_config":
            modes = " or ".join(f"-m {mode.name}" for mode in MODES.values() if mode.config == FILE)
            raise usage_error(f"--set {'.'.join(path)}: only a parallel config has a system_config; valid choices: "
                              f"{modes} (else a key of main_config, e.g. policy.learn.batch_size)")
        node = main
        for k in path[:-1]:
            child = node.get(k)
            if child is None:
                child = node[k] = {}
            elif not isinstance(child, dict):
                raise usage_error(f"--set {'.'.join(path)}: '{k}' holds {child!r}, not a section")
            node = child
        node[path[-1]] = value
    return main


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
        return finish(mode.name, pipeline(None, resume=args.resume, **kw).result)
    for seed, exp_name in cfg.runs:
        code = finish(mode.name, pipeline(cfg.config, seed=seed, exp_name=exp_name, **kw).result)
        if code:
            return code
    return 0


def _eval(mode: Mode, args: argparse.Namespace, cfg: Optional[Loaded]) -> int:
    """``-m eval --load PATH``: a fresh evaluation of a run's policy, summarised."""
    r = mode.entry_point()(args.load, n_episode=args.episodes, seed=args.seed[0] if args.seed else None,
                           replay_path=args.replay_path)
    report_eval(r, args.replay_path)
    return 0


def _collect_demo(mode: Mode, args: argparse.Namespace, cfg: Optional[Loaded]) -> int:
    """``-m collect_demo``: the expert's (``--ckpt``) greedy episodes written as a Minari dataset (``--out``)."""
    assert cfg is not None  # a ZOO mode that does not resume
    path = mode.entry_point()(cfg.config, cfg.runs[0][0], args.ckpt, n_episode=args.episodes, out_dir=args.out)
    report_demo(path)
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
        print(f"stride: interrupted; resume with: {tune_command(args, cfg.runs[0][0])}")
        return EXIT_CODES.get(str(e), 130)
    report_tune(result)
    return 0


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
                                      not args.no_progress, resume=args.resume)
        return finish(mode.name, policy.result)
    if args.resume:  # the short form's run
        policy = dist.resume_all(args.resume, args.train_iter, args.env_step, not args.no_progress)
        return finish(mode.name, policy.result)
    assert cfg is not None  # --module config and the short form read the config
    (main, create, system), (seed, exp_name) = cfg.config, cfg.runs[0]
    if args.address and isinstance(system, dict):  # (a system_config that is no dict is refused by the entry)
        system = {**system, "address": args.address}
    if args.module is None:
        policy = dist.run_all(args.config, seed, main, create, system, exp_name, args.address,
                              args.train_iter, args.env_step, not args.no_progress)
        return finish(mode.name, policy.result)
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
         run=_train, takes=("--resume", "--train-iter", "--env-step")),
    Mode("serial_onpolicy", "serial_entry_onpolicy:serial_pipeline_onpolicy", "train an on-policy agent (PPO, A2C...)",
         run=_train, takes=("--resume", "--train-iter", "--env-step")),
    Mode("serial_reward_model", "serial_entry_reward_model:serial_pipeline_reward_model",
         "train with the config's reward model (insists on a reward_model section)",
         run=_train, takes=("--resume", "--train-iter", "--env-step")),
    Mode("eval", "eval_entry:eval_pipeline", "a fresh evaluation of a run's policy (--episodes, --replay-path)",
         run=_eval, config=NONE, needs=("--load PATH (an experiment folder or a checkpoint file)",), takes=(),
         seeds=False, why={"--resume": "give the run to evaluate with --load"}),
    Mode("parallel", "parallel.pipeline:parallel_pipeline", "train on Ray (stride-rl[dist]), collectors and "
         "learner overlapping", run=_train, config=FILE,
         takes=("--resume", "--train-iter", "--env-step"),
         why={"--workers": "its collectors are system_config.collector_num"}),
    Mode("dist", "parallel.dist", "train on a running Ray cluster, a process per --module "
         "(docs/pipelines/ray.md)", run=_dist, config=FILE, seeds=False, check=dist_reads_config,
         takes=("--resume", "--train-iter", "--env-step")),
    Mode("collect_demo", "collect_demo:collect_demo_data", "record an expert's greedy episodes as a Minari dataset "
         "(--out DIR)", run=_collect_demo, takes=(), seeds=False,
         needs=("--ckpt PATH (the expert's checkpoint or experiment folder)", "--episodes N")),
    Mode("offline", "serial_entry_offline:serial_pipeline_offline", "train from the dataset at "
         "policy.collect.data_path", run=_train, takes=("--resume", "--train-iter"),
         why={"--env-step": "it never steps an env to train: use --train-iter"}),
    Mode("league", "league_entry:league_pipeline", "self-play with a league (--workers N: N collector actors on Ray)",
         run=_train, takes=("--resume", "--env-step", "--workers"), why={"--train-iter": "its limit is --env-step"}),
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
        raise usage_error(f"unknown mode '{args.mode}'; valid choices: {', '.join(MODES)}")
    check_flags(mode, args, MODES)
    return mode.run(mode, args, _load(mode, args))


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
        raise usage_error(f"-m {mode.name} needs -c CONFIG_FILE (a config with a system_config, e.g. "
                          "stride/zoo/cartpole/config/parallel/cartpole_dqn_config.py)")
    elif args.env and args.policy:
        main, create = zoo_config(args.env, args.policy)
        parts, default_name = {"main_config": main, "create_config": create}, f"{args.env}_{args.policy}"
    else:
        raise usage_error("give either -c CONFIG_FILE or both -e ENV and -p POLICY (see stride -h)")
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
        raise usage_error("--set system_config=...: give one key, e.g. --set system_config.collector_num=4")
    in_main = [(path, value) for path, value in settings if not (system and path[0] == "system_config")]
    config = [apply_settings(copy.deepcopy(parts["main_config"]), in_main), parts["create_config"]]
    if system:
        system_config = parts.get("system_config") or {}
        written = in_system and isinstance(system_config, dict)
        config.append(apply_settings(copy.deepcopy(system_config), in_system) if written else system_config)
    return config


_SEED_SUFFIX = re.compile(r"_seed\d+(_\d+)?$")


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the ``stride`` command; returns the exit code. ``stride plot ...`` draws
    runs' learning curves (:mod:`.plot`); everything else trains, evaluates or tunes (``-m``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["plot"]:
        from . import plot

        return _guarded(lambda: _parsed(plot.main, argv[1:]))
    try:
        args = parser(MODES).parse_args(argv)
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
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM outside a run's loop (entry.utils.sigterm_as_ctrl_c)
        from .run_state import EXIT_CODES

        name = str(e) if str(e) in EXIT_CODES else "SIGINT"
        print(f"stride: aborted ({name})", file=sys.stderr)
        return EXIT_CODES[name]


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
