"""Stable-Baselines3's SAC + ``HerReplayBuffer`` on FetchReach-v4: the peer run for
``fetchreach_sac_her_vs_sb3.py``, under Stride's evaluation rule and the zoo config's hyper-parameters.

    PYTHONPATH=. nice -n 5 benchmarks/.venv-peers/bin/python benchmarks/her/sb3_her_fetchreach.py --env-step 20000 --seed 0

Setting (both sides: rl-baselines3-zoo ``hyperparams/her.yml``, ``FetchReach-v1`` SAC, as
``stride/zoo/fetch/config/fetchreach_sac_her_config.py``): 'future' goals, ``n_sampled_goal=4``,
batch 256, gamma 0.95, learning rate 1e-3, automatic entropy, replay 1e6, ``learning_starts=1000``
(uniformly random actions, as SB3 does before learning starts), [256, 256] MLPs (SB3's default), tau
0.005, one gradient step per env step, no observation normalisation on either side. SB3 steps and
trains transition by transition; Stride collects a 50-step episode, then takes 50 gradient steps.
The env is made through ``stride.zoo.fetch.register_fetch`` (from the repo, on ``PYTHONPATH``): the
same env and the same MuJoCo-4 joint-accessor adaptation for both.

Rule (Stride's evaluator's): every 2,000 env steps a 20-episode deterministic screen of the success
rate (``info['is_success']`` at an episode's end); a screen at >= 0.9 is confirmed on 100 further
episodes, and a confirmed one stops the run. Afterwards 100 fresh episodes of the final policy.
Train CPU seconds exclude evaluation (``time.process_time()``). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from typing import Any, Dict, List

import gymnasium as gym
import torch
from stable_baselines3 import SAC, HerReplayBuffer
from stable_baselines3.common.callbacks import BaseCallback

from stride.zoo.fetch import register_fetch

ENV_ID = "FetchReach-v4"


def success_rate(model: SAC, env: gym.Env, episodes: int, seed: int) -> float:
    wins = 0.0
    for k in range(episodes):
        obs, _ = env.reset(seed=seed + k)
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        wins += float(bool(info["is_success"]))
    return wins / episodes


class ScreenAndConfirm(BaseCallback):
    """Stride's evaluation rule; eval CPU time kept apart."""

    def __init__(self, seed: int, every: int = 2000, screen: int = 20, confirm: int = 100) -> None:
        super().__init__()
        self.env = gym.make(ENV_ID)
        self.every, self.seed, self.screen, self.confirm = every, seed, screen, confirm
        self.eval_cpu = 0.0
        self.curve: List[Dict[str, Any]] = []
        self.stopped_at: Any = None
        self.episodes = 0
        self.cpu0 = time.process_time()  # reset when learning starts

    def _on_step(self) -> bool:
        if self.num_timesteps % self.every:
            return True
        cpu = time.process_time()
        screen = success_rate(self.model, self.env, self.screen, self.seed + 10_000 + self.episodes)
        self.episodes += self.screen
        confirm = None
        if screen >= 0.9:
            confirm = success_rate(self.model, self.env, self.confirm, self.seed + 10_000 + self.episodes)
            self.episodes += self.confirm
        self.eval_cpu += time.process_time() - cpu
        self.curve.append({"envstep": self.num_timesteps, "screen": screen, "confirm": confirm,
                           "train_cpu_seconds": round(time.process_time() - self.eval_cpu - self.cpu0, 3)})
        if confirm is not None and confirm >= 0.9:
            self.stopped_at = self.num_timesteps
            return False
        return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env-step", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    uptime0 = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    register_fetch()
    env = gym.make(ENV_ID)
    model = SAC("MultiInputPolicy", env, replay_buffer_class=HerReplayBuffer,
                replay_buffer_kwargs=dict(n_sampled_goal=4, goal_selection_strategy="future"),
                learning_rate=1e-3, buffer_size=1_000_000, learning_starts=1000, batch_size=256, gamma=0.95,
                tau=0.005, ent_coef="auto", train_freq=1, gradient_steps=1,
                policy_kwargs=dict(net_arch=[256, 256]), seed=args.seed, device="cpu")
    cb = ScreenAndConfirm(args.seed)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    cb.cpu0 = cpu0
    model.learn(total_timesteps=args.env_step, callback=cb)
    train_cpu = time.process_time() - cpu0 - cb.eval_cpu
    final = success_rate(model, cb.env, 100, args.seed + 20_000)
    print(json.dumps({"peer": "sb3 SAC + HerReplayBuffer", "env_id": ENV_ID, "seed": args.seed,
                      "env_step": int(model.num_timesteps), "stop_confirmed": cb.stopped_at is not None,
                      "final_success_100": final, "train_cpu_seconds": round(train_cpu, 1),
                      "wall_seconds": round(time.perf_counter() - wall0, 1), "curve": cb.curve,
                      "uptime_start": uptime0,
                      "uptime_end": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()}))


if __name__ == "__main__":
    main()
