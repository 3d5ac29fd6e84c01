"""Stable-Baselines3's DQN + ``HerReplayBuffer`` on its own ``BitFlippingEnv``: the peer run for
``bitflip_her_vs_dqn.py``, under the same rule and as close a setting as SB3 allows.

    nice -n 5 benchmarks/.venv-peers/bin/python benchmarks/her/sb3_her_bitflip.py --n-bits 15 --env-step 300000 --seed 0

Rule (Stride's evaluator's): every 5,000 env steps a 16-episode greedy screen; a screen at >= 0.9
success is confirmed on 100 further episodes, and a confirmed one stops the run. Setting matched to
``stride/zoo/bitflip/config/bitflip_dqn_her_config.py``: 'future' goals, 4 relabelled per original
(SB3's ``n_sampled_goal=4``), MLP 128-128-64, Adam lr 5e-4, batch 128, discount 0.9, eps 0.2
constant, one gradient step per 12 env steps (Stride: 10 per 120), learning from 480 env steps
(Stride: once 32 episodes are stored), target copy every 6,000 env steps (Stride: every 500
gradient steps = 6,000 env steps), replay of 60,000 transitions (Stride: 4,000 episodes).
The network is the same (128-128-64 MLP, linear Q layer; Stride's config had a dueling head until
2026-11-25). Differences SB3 imposes: Huber loss and gradient-norm clip 10 (SB3's defaults),
one env (SB3 collects step by step), reward -1/0 (its env's; success is ``info['is_success']``).
Train CPU seconds exclude evaluation. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from typing import Any, Dict, List

import torch
from stable_baselines3 import DQN, HerReplayBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.envs import BitFlippingEnv


def success_rate(model: DQN, env: BitFlippingEnv, episodes: int, seed: int) -> float:
    wins = 0
    for k in range(episodes):
        obs, _ = env.reset(seed=seed + k)
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(int(action))
            done = terminated or truncated
        wins += bool(info["is_success"])
    return wins / episodes


class ScreenAndConfirm(BaseCallback):
    """Stride's evaluation rule; eval CPU time kept apart."""

    def __init__(self, n_bits: int, seed: int, every: int = 5000) -> None:
        super().__init__()
        self.env = BitFlippingEnv(n_bits=n_bits, continuous=False, max_steps=n_bits)
        self.every, self.seed = every, seed
        self.eval_cpu = 0.0
        self.curve: List[Dict[str, Any]] = []
        self.stopped_at: Any = None
        self.episodes = 0

    def _on_step(self) -> bool:
        if self.num_timesteps % self.every:
            return True
        cpu = time.process_time()
        screen = success_rate(self.model, self.env, 16, self.seed + 10_000 + self.episodes)
        self.episodes += 16
        confirm = None
        if screen >= 0.9:
            confirm = success_rate(self.model, self.env, 100, self.seed + 10_000 + self.episodes)
            self.episodes += 100
        self.eval_cpu += time.process_time() - cpu
        self.curve.append({"envstep": self.num_timesteps, "screen": screen, "confirm": confirm})
        if confirm is not None and confirm >= 0.9:
            self.stopped_at = self.num_timesteps
            return False
        return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n-bits", type=int, default=15)
    ap.add_argument("--env-step", type=int, default=300_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    uptime0 = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    env = BitFlippingEnv(n_bits=args.n_bits, continuous=False, max_steps=args.n_bits)
    model = DQN("MultiInputPolicy", env, replay_buffer_class=HerReplayBuffer,
                replay_buffer_kwargs=dict(n_sampled_goal=4, goal_selection_strategy="future"),
                learning_rate=5e-4, buffer_size=60_000, learning_starts=480, batch_size=128, gamma=0.9,
                train_freq=12, gradient_steps=1, target_update_interval=6000, exploration_fraction=0.1,
                exploration_initial_eps=0.2, exploration_final_eps=0.2,
                policy_kwargs=dict(net_arch=[128, 128, 64]), seed=args.seed, device="cpu")
    cb = ScreenAndConfirm(args.n_bits, args.seed)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    model.learn(total_timesteps=args.env_step, callback=cb)
    train_cpu = time.process_time() - cpu0 - cb.eval_cpu
    final = success_rate(model, cb.env, 100, args.seed + 20_000)
    print(json.dumps({"peer": "sb3 DQN + HerReplayBuffer", "n_bits": args.n_bits, "seed": args.seed,
                      "env_step": int(model.num_timesteps), "stop_confirmed": cb.stopped_at is not None,
                      "final_success_100": final, "train_cpu_seconds": round(train_cpu, 1),
                      "wall_seconds": round(time.perf_counter() - wall0, 1), "curve": cb.curve,
                      "uptime_start": uptime0,
                      "uptime_end": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()}))


if __name__ == "__main__":
    main()
