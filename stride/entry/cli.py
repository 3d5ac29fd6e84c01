"""The ``stride`` command (DI-engine's ``ding`` flags).

    stride -m serial -e cartpole -p dqn -s 0
    stride -m serial -c my_config.py -s 0 --env-step 100000
    stride -m serial --resume cartpole_dqn_seed0          # continue an interrupted run
    stride -m eval --load cartpole_dqn_seed0 --episodes 100  # a fresh evaluation of its policy

Every user error (unknown env or policy, missing config file, mistyped config key, action outside
the action space...) ends with one line naming the bad value and the valid choices, exit code 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

MODES = ("serial", "serial_onpolicy", "eval")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="stride",
        description="Train reinforcement-learning agents with Stride.",
        epilog="Examples:\n  stride -m serial -e cartpole -p dqn -s 0\n  stride -m serial -c cartpole_dqn_config.py -s 0\n"
               "  stride -m serial --resume cartpole_dqn_seed0\n"
               "  stride -m eval --load cartpole_dqn_seed0 --episodes 100\n\n"
               "A -c config file is Python and is executed: only use files you trust. --resume reads the\n"
               "experiment's total_config.json (data only) and its latest checkpoint.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-m", "--mode", default="serial", help=f"pipeline to run; one of: {', '.join(MODES)} (default serial)")
    p.add_argument("-e", "--env", help="zoo environment name, e.g. cartpole (with -p)")
    p.add_argument("-p", "--policy", help="policy name, e.g. dqn (with -e)")
    p.add_argument("-c", "--config", help="a config .py file defining main_config and create_config")
    p.add_argument("-s", "--seed", type=int, nargs="+", action="extend",
                   help="seed(s); several seeds run one after another (default 0; -m eval: the eval envs' "
                        "seed, default the run's seed + 10000)")
    p.add_argument("--train-iter", type=float, default=None, help="stop after this many train iterations")
    p.add_argument("--env-step", type=float, default=None, help="stop after this many env steps")
    p.add_argument("--exp-name", default=None,
                   help="experiment folder (default: <config exp_name>_seed<S>; never overwritten: _1, _2... appended)")
    p.add_argument("--resume", default=None, metavar="PATH",
                   help="continue from an experiment folder (its latest checkpoint) or a checkpoint file")
    p.add_argument("--load", default=None, metavar="PATH",
                   help="-m eval: the experiment folder (its latest checkpoint) or checkpoint file to evaluate")
    p.add_argument("--episodes", type=int, default=None,
                   help="-m eval: evaluation episodes (default: the config's env.n_evaluator_episode)")
    p.add_argument("--no-progress", action="store_true", help="don't show the progress bar")
    p.add_argument("-v", "--version", action="store_true", help="print the version and exit")
    return p


def _run(args: argparse.Namespace) -> int:
    from ..utils.errors import ConfigError

    if args.mode not in MODES:
        raise ConfigError(f"unknown mode '{args.mode}'; valid choices: {', '.join(MODES)}")
    from .utils import read_config, zoo_config

    if args.mode == "eval":
        return _eval(args)
    def pipeline(input_cfg, **kw):  # noqa: ANN001, ANN202 - imports torch only once the input is known valid
        if args.mode == "serial_onpolicy":
            from .serial_entry_onpolicy import serial_pipeline_onpolicy

            return serial_pipeline_onpolicy(input_cfg, **kw)
        from .serial_entry import serial_pipeline  # picks the on-policy loop itself from policy.on_policy

        return serial_pipeline(input_cfg, **kw)

    train_iter = None if args.train_iter is None else int(args.train_iter)
    env_step = None if args.env_step is None else int(args.env_step)
    if args.resume:
        policy = pipeline(None, max_train_iter=train_iter, max_env_step=env_step, resume=args.resume,
                                 progress=not args.no_progress)
        _report(policy.result)
        return 0
    if args.config:
        main, create = read_config(args.config)
        default_name = os.path.splitext(os.path.basename(args.config))[0].replace("_config", "")
    elif args.env and args.policy:
        main, create = zoo_config(args.env, args.policy)
        default_name = main.get("exp_name", f"{args.env}_{args.policy}")
    else:
        raise ConfigError("give either -c CONFIG_FILE or both -e ENV and -p POLICY (see stride -h)")
    seeds = args.seed or [0]
    for seed in seeds:
        exp_name = args.exp_name or f"{main.get('exp_name', default_name)}_seed{seed}"
        if args.exp_name and len(seeds) > 1:
            exp_name = f"{args.exp_name}_seed{seed}"
        policy = pipeline([main, create], seed=seed, max_train_iter=train_iter, max_env_step=env_step,
                                 exp_name=exp_name, progress=not args.no_progress)
        _report(policy.result)
        if policy.result.get("interrupted"):
            return 130
    return 0


def _eval(args: argparse.Namespace) -> int:
    from ..utils.errors import ConfigError

    if not args.load:
        raise ConfigError("-m eval needs --load PATH (an experiment folder or a checkpoint file)")
    if args.seed and len(args.seed) > 1:
        raise ConfigError(f"-m eval takes one seed, got {args.seed}")
    from .eval_entry import eval_pipeline

    r = eval_pipeline(args.load, n_episode=args.episodes, seed=args.seed[0] if args.seed else None)
    verdict = "" if r["stop_value"] is None else \
        f"; stop value {r['stop_value']:g}: {'reached' if r['reached'] else 'NOT reached'}"
    print(f"stride: evaluated {r['checkpoint']} (train_iter={r['train_iter']} env_step={r['envstep']}) over "
          f"{r['n_episode']} episodes, eval envs seeded {r['seed']}: mean {r['mean']:.2f} +- {r['std']:.2f} "
          f"(min {r['min']:.1f}, max {r['max']:.1f}){verdict}")
    print(f"stride: returns in {r['result_file']}")
    return 0


def _report(result: dict) -> None:
    exp = result["exp_dir"]
    ret = result["eval_return"]
    if result.get("interrupted"):
        status = "interrupted"
    elif result["stop"]:
        status = "reached the stop value"
    else:
        status = "stopped at the step/iteration limit"
    print(f"stride: {status}: env_step={result['env_step']} train_iter={result['train_iter']} "
          f"eval_return={'-' if ret is None else f'{ret:.2f}'} train_cpu={result['train_cpu_seconds']:.1f}s")
    print(f"stride: results in {os.path.abspath(exp)} (config, ckpt/, log/, progress.csv, result.json)")
    if result.get("interrupted"):
        print(f"stride: resume with: stride -m serial --resume {exp}")


def main(argv: Optional[List[str]] = None) -> int:
    """Entry point of the ``stride`` command; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.version:
        from .. import __version__

        print(f"stride {__version__}")
        return 0
    from ..utils.errors import StrideError

    try:
        return _run(args)
    except StrideError as e:
        print(f"stride: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stride: aborted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
