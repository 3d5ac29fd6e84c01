"""Learning check of the PettingZoo zoo configs (Stride only: no peer runs here yet).

- ``tictactoe``: trains ``stride.zoo.pettingzoo.config.tictactoe_dqn_config`` (DQN against the
  random opponent) for ``--env-step`` steps per seed, then plays the returned policy's greedy eval
  mode in 100 fresh games (seeds the training never used) against ``'random'`` and ``'win_block'``
  and prints win / draw / loss counts.
- ``simple_spread``: trains ``simple_spread_ppo_config`` and prints the mean per-agent return of the
  greedy and of the sampling policy, over 30 fresh episodes, before and after training.

Run from the repository root: ``python benchmarks/pettingzoo/learning_check.py tictactoe --seeds 0 1 2``.
"""

from __future__ import annotations

import argparse
import copy
import os
import tempfile
import time

import numpy as np

from stride.entry import serial_pipeline, serial_pipeline_onpolicy
from stride.entry.utils import zoo_config
from stride.envs import PettingZooEnv


def games(policy, opponent: str, n: int, seed: int) -> tuple:
    """(wins, draws, losses) of ``policy``'s eval mode as player_1 in ``n`` games against ``opponent``."""
    env = PettingZooEnv(cfg=dict(env_id="pettingzoo.classic.tictactoe_v3", opponent=opponent))
    env.seed(seed)
    policy.eval_mode.reset()
    out = {1.0: 0, 0.0: 0, -1.0: 0}
    for _ in range(n):
        obs = env.reset()
        while True:
            action = policy.eval_mode.forward({0: obs["player_1"]})[0]["action"]
            ts = env.step({"player_1": int(action)})
            if ts.done:
                out[ts.info["eval_episode_return"]["player_1"]] += 1
                break
            obs = ts.obs
    env.close()
    return out[1.0], out[0.0], out[-1.0]


def spread_returns(policy, n: int, seed: int, sample: bool) -> float:
    """Mean per-agent return of ``n`` simple-spread episodes, greedy (eval mode) or sampled (collect mode)."""
    main, _ = zoo_config("simple_spread", "ppo")
    env = PettingZooEnv(cfg=dict(env_id=main["env"]["env_id"], env_kwargs=main["env"]["env_kwargs"]))
    env.seed(seed)
    mode = policy.collect_mode if sample else policy.eval_mode
    totals = []
    for _ in range(n):
        obs = env.reset()
        while True:
            agents = list(obs)
            out = mode.forward({i: obs[a] for i, a in enumerate(agents)})
            ts = env.step({a: int(out[i]["action"]) for i, a in enumerate(agents)})
            if ts.done:
                totals.append(np.mean(list(ts.info["eval_episode_return"].values())))
                break
            obs = ts.obs
    return float(np.mean(totals))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("env", choices=["tictactoe", "simple_spread"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--env-step", type=int, default=None, help="default: 50,000 (tictactoe) / 600,000 (simple_spread)")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    algo = "dqn" if args.env == "tictactoe" else "ppo"
    steps = args.env_step or (50_000 if args.env == "tictactoe" else 600_000)
    for seed in args.seeds:
        main_cfg, create = zoo_config(args.env, algo)
        main_cfg = copy.deepcopy(main_cfg)
        main_cfg["env"]["stop_value"] = 1e9  # the whole budget: the figure is of a fixed number of steps
        with tempfile.TemporaryDirectory() as tmp:
            t0, cpu0 = time.perf_counter(), time.process_time()
            run = serial_pipeline if algo == "dqn" else serial_pipeline_onpolicy
            if algo == "ppo":
                from stride.entry.utils import build_policy
                from stride.config import compile_config
                before = build_policy(compile_config(copy.deepcopy(main_cfg), copy.deepcopy(create), save_cfg=False, seed=seed))
                b_greedy, b_sample = spread_returns(before, 30, 50_000 + seed, False), spread_returns(before, 30, 50_000 + seed, True)
            policy = run([main_cfg, create], seed=seed, max_env_step=steps, exp_name=os.path.join(tmp, "run"), progress=False)
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        if algo == "dqn":
            r = games(policy, "random", 100, 10_000 + seed)
            w = games(policy, "win_block", 100, 20_000 + seed)
            print(f"seed {seed}: {steps} env steps, {wall:.0f} s wall, {cpu:.0f} CPU-s | vs random W/D/L {r[0]}/{r[1]}/{r[2]} "
                  f"(win rate {r[0] / 100:.2f}) | vs win_block W/D/L {w[0]}/{w[1]}/{w[2]} | load {os.getloadavg()[0]:.1f}")
        else:
            a_greedy, a_sample = spread_returns(policy, 30, 50_000 + seed, False), spread_returns(policy, 30, 50_000 + seed, True)
            print(f"seed {seed}: {steps} agent steps, {wall:.0f} s wall, {cpu:.0f} CPU-s | mean per-agent return, 30 episodes: "
                  f"greedy {b_greedy:.1f} -> {a_greedy:.1f}, sampled {b_sample:.1f} -> {a_sample:.1f} | load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
