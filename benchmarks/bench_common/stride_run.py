"""Stride contestant: ``serial_pipeline`` on a zoo config (CartPole DQN / PPO, Pendulum SAC), one seed.
Run as ``python -m bench_common.stride_run --algo dqn|ppo|sac ...``.

Stride measures itself: ``<exp_dir>/result.json`` carries ``train_cpu_seconds`` (process CPU time
excluding evaluation) and ``eval_cpu_seconds``; the config actually used is
``<exp_dir>/total_config.json``. ``outer_cpu_seconds`` (CPU around the call; includes evaluation
and set-up) is a cross-check.
"""

from __future__ import annotations

import argparse
import copy
import glob
import importlib
import json
import os

from bench_common.proc import cpu, emit, log, setup_process

CONFIGS = {"dqn": "stride.zoo.cartpole.config.cartpole_dqn_config",
           "ppo": "stride.zoo.cartpole.config.cartpole_ppo_config",
           "sac": "stride.zoo.pendulum.config.pendulum_sac_config"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--algo", choices=sorted(CONFIGS), required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-env-steps", type=int, default=200_000)
    ap.add_argument("--exp-dir", required=True, help="must not exist yet")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)

    import stride
    from stride.entry import serial_pipeline

    mod = importlib.import_module(CONFIGS[args.algo])
    main_cfg = copy.deepcopy(mod.main_config)
    main_cfg["exp_name"] = os.path.abspath(args.exp_dir)
    c0 = cpu()
    policy = serial_pipeline([main_cfg, copy.deepcopy(mod.create_config)], seed=args.seed,
                             max_env_step=args.max_env_steps)
    outer = cpu() - c0

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
        sd = policy.learn_mode.state_dict()["model"]
        n_params = int(sum(v.numel() for v in sd.values()))
    except Exception as e:  # noqa: BLE001 - informative only
        log(f"[stride] could not count model parameters: {e!r}")
    emit({"contestant": "stride", "algo": args.algo, "seed": args.seed, "exp_dir": exp_dir, "result": result,
          "total_config": total, "outer_cpu_seconds": outer, "n_params": n_params,
          "stride_version": getattr(stride, "__version__", "?"), **info}, args.out)


if __name__ == "__main__":
    main()
