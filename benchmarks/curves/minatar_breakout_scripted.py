"""A scripted MinAtar Breakout player, the yardstick for what a learned policy's return means.

It reads the ball and its trail, predicts the column where a falling ball reaches the paddle's
row (walls reflect it), and moves the paddle there. With MinAtar's sticky actions (0.1, the
benchmark's env) an action is sometimes replaced by the previous one, so the paddle arrives late
and the ball is lost; without them the same player scores ~28 per episode (some episodes
never end: the ball loops without touching a brick, so episodes are capped at 5,000 steps).

    benchmarks/.venv-peers/bin/python benchmarks/curves/minatar_breakout_scripted.py --episodes 100
"""

from __future__ import annotations

import argparse

import numpy as np


def landing_column(obs: np.ndarray) -> int:
    """Column the paddle should stand in: the ball's landing column when it falls, else the ball's."""
    ball_y, ball_x = np.argwhere(obs[:, :, 1])[0]
    trail_y, trail_x = np.argwhere(obs[:, :, 2])[0]
    if ball_y <= trail_y:  # rising (or the first frame): follow it
        return int(ball_x)
    x, dx = int(ball_x), int(np.sign(ball_x - trail_x)) or 1
    for _ in range(9 - int(ball_y)):
        x += dx
        if x < 0 or x > 9:
            x, dx = min(max(x, 0), 9), -dx
    return x


def play(episodes: int, sticky: float, seed: int, max_steps: int = 5000) -> list:
    import gymnasium as gym
    from minatar.gym import register_envs

    if "MinAtar/Breakout-v1" not in gym.registry:
        register_envs()
    # a step cap: without sticky actions the player can keep the ball in a loop that never ends
    env = gym.make("MinAtar/Breakout-v1", sticky_action_prob=sticky, max_episode_steps=max_steps)  # actions: 0 no-op, 1 left, 2 right
    returns = []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        done, total = False, 0.0
        while not done:
            paddle, target = int(np.argmax(obs[9, :, 0])), landing_column(obs)
            action = 0 if paddle == target else (1 if target < paddle else 2)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return returns


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--seed", type=int, default=30000)
    args = ap.parse_args()
    for sticky in (0.1, 0.0):
        r = play(args.episodes, sticky, args.seed)
        print(f"sticky_action_prob={sticky}: mean {np.mean(r):.2f} ± {np.std(r):.2f} "
              f"(min {min(r):.0f}, max {max(r):.0f}) over {len(r)} episodes")


if __name__ == "__main__":
    main()
