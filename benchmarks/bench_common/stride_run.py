"""Stride contestant: ``serial_pipeline`` on a case's zoo config (:mod:`bench_common.cases`), one seed.
Run as ``python -m bench_common.stride_run --case dqn|ppo|sac|lunarlander_dqn|... ...`` (``--algo`` is
the same flag, its issue-13 name).

Stride measures itself: ``<exp_dir>/result.json`` carries ``train_cpu_seconds`` (process CPU time
excluding evaluation) and ``eval_cpu_seconds``; the config actually used is
``<exp_dir>/total_config.json``. ``outer_cpu_seconds`` (CPU around the call; includes evaluation
and set-up) is a cross-check. ``--eval-every / --eval-episodes / --confirm-episodes`` impose a stop
rule on the run through Stride's own evaluator config (evaluate every N env steps; a passing
evaluation is confirmed on further episodes); ``--set KEY=VALUE`` overrides any other config key
(hyper-parameter sweeps); ``--fresh-episodes`` evaluates the returned policy afterwards with the
benchmarks' own evaluator (``bench_common.evaluate``), on seeds no evaluation of the run used;
``--resume`` continues a run that was killed (``benchmarks/curves/queue.sh``).
"""

from __future__ import annotations

import argparse
import ast
import copy
import csv
import glob
import importlib
import json
import os
import signal
import sys

import numpy as np

from bench_common.cases import CASES
from bench_common.evaluate import evaluate_batched
from bench_common.proc import cpu, emit, log, setup_process


def _set(cfg: dict, dotted: str, value) -> None:
    node = cfg
    *path, last = dotted.split(".")
    for k in path:
        node = node.setdefault(k, {})
    node[last] = value


def _literal(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def screen_history(exp_dir: str, stop_value: float, stopped: bool = False) -> dict:
    """From ``progress.csv``: the first passing screen and the screens whose confirmation failed
    (every confirmed screen but the last one of a run that ``stopped`` on its stop value: a
    confirmation asked for a margin, ``confirm_std_errors``, fails with a mean above ``stop_value``)."""
    first, confirmed = None, []
    path = os.path.join(exp_dir, "progress.csv")
    if not os.path.exists(path):
        return {"first_screen_hit": None, "unconfirmed": []}
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if r.get("eval_return_mean")]
    for i, row in enumerate(rows):
        screen = float(row["eval_return_mean"])
        confirm = float(row["confirm_return_mean"]) if row.get("confirm_return_mean") else None
        if screen >= stop_value and int(row["train_iter"]) > 0:
            first = first if first is not None else int(row["envstep"])
            if confirm is not None:
                confirmed.append((i, (int(row["envstep"]), round(screen, 1), round(confirm, 1))))
    stopped_on = len(rows) - 1 if stopped else None
    return {"first_screen_hit": first, "unconfirmed": [hit for i, hit in confirmed if i != stopped_on]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", "--algo", dest="case", choices=sorted(CASES), default=None,
                    help="a learning-benchmark case (without one: --config-module and --env-id)")
    ap.add_argument("--config-module", default=None, help="a config module instead of the case's zoo config")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-env-steps", type=int, default=200_000)
    ap.add_argument("--exp-dir", required=True, help="must not exist yet (unless --resume)")
    ap.add_argument("--resume", action="store_true",
                    help="continue the run in --exp-dir from its latest checkpoint, with its saved config "
                         "(the config flags are not applied again); --max-env-steps is the whole run's")
    ap.add_argument("--eval-every", type=int, default=0, help="evaluate every this many env steps (0: the config's)")
    ap.add_argument("--eval-episodes", type=int, default=0, help="episodes per evaluation (0: the config's)")
    ap.add_argument("--confirm-episodes", type=int, default=-1, help="confirmation episodes (-1: the config's)")
    ap.add_argument("--fresh-episodes", type=int, default=0, help="evaluate the returned policy afterwards")
    ap.add_argument("--env-id", default=None, help="Gymnasium id of the fresh evaluation (default: the algo's)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.case is None and not (args.config_module and args.env_id):
        ap.error("give --case, or --config-module and --env-id")
    info = setup_process(args.seed)
    case = CASES[args.case] if args.case else None

    import stride
    from stride.entry import serial_pipeline

    mod = importlib.import_module(args.config_module or case.config)
    main_cfg = copy.deepcopy(mod.main_config)
    main_cfg["exp_name"] = os.path.abspath(args.exp_dir)
    if args.eval_every:
        _set(main_cfg, "policy.eval.evaluator.eval_freq_envstep", args.eval_every)
    if args.eval_episodes:
        _set(main_cfg, "env.n_evaluator_episode", args.eval_episodes)
    if args.confirm_episodes >= 0:
        _set(main_cfg, "policy.eval.evaluator.confirm_episode", args.confirm_episodes)
    for item in args.set:
        key, _, value = item.partition("=")
        _set(main_cfg, key, _literal(value))
    c0 = cpu()
    if args.resume:  # its progress.csv is appended to and its clocks go on from the checkpoint's
        policy = serial_pipeline(None, resume=main_cfg["exp_name"], max_env_step=args.max_env_steps, progress=False)
    else:
        policy = serial_pipeline([main_cfg, copy.deepcopy(mod.create_config)], seed=args.seed,
                                 max_env_step=args.max_env_steps, progress=False)
    outer = cpu() - c0
    if policy.result.get("interrupted"):  # a signal stopped it (checkpoint saved): no result; --resume continues it
        name = str(policy.result.get("signal") or "SIGTERM")
        log(f"[stride] interrupted by {name} at env step {policy.result.get('env_step')}; resume with --resume")
        sys.exit(128 + int(getattr(signal, name, signal.SIGTERM)))

    exp_dir = main_cfg["exp_name"]
    if not os.path.exists(os.path.join(exp_dir, "result.json")):  # renamed (never-overwrite rule)?
        cands = sorted(glob.glob(exp_dir + "*/result.json"), key=os.path.getmtime)
        if not cands:
            raise SystemExit(f"no result.json under {exp_dir}")
        exp_dir = os.path.dirname(cands[-1])
    with open(os.path.join(exp_dir, "result.json")) as f:
        result = json.load(f)
    with open(os.path.join(exp_dir, "total_config.json")) as f:
        total = json.load(f)
    n_params = None
    try:
        # parameters, not state_dict entries: a shared encoder appears once per head in the state_dict
        n_params = int(sum(p.numel() for p in policy.model.parameters()))
    except Exception as e:  # noqa: BLE001 - informative only
        log(f"[stride] could not count model parameters: {e!r}")
    record = {"contestant": "stride", "case": args.case, "algo": case.algo if case else total["policy"]["type"],
              "seed": args.seed, "exp_dir": exp_dir,
              "result": result,
              "total_config": total, "outer_cpu_seconds": outer, "n_params": n_params,
              "stride_version": getattr(stride, "__version__", "?"), "overrides": args.set,
              **screen_history(exp_dir, float(total["env"]["stop_value"]), bool(result.get("stop"))), **info}
    if args.fresh_episodes:
        def act(batch: np.ndarray) -> np.ndarray:
            out = policy.eval_mode.forward({i: o for i, o in enumerate(batch)})
            return np.stack([out[i]["action"] for i in range(len(batch))])

        record["fresh_returns"] = evaluate_batched(act, args.fresh_episodes, 8, 30_000 + args.seed,
                                                   args.env_id or case.env_id)
    emit(record, args.out)


if __name__ == "__main__":
    main()
