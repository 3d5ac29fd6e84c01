"""A small demonstration dataset of uniformly random actions, for the zoo's demonstration configs'
smoke tests (GAIL, BC, SQIL, R2D3): they test the wiring, not learning."""

from __future__ import annotations

from typing import Callable, Optional

import gymnasium as gym
import numpy as np

from stride.data.demo import write_demo_dataset


def random_demo(env_id: str, path: str, episodes: int = 2, max_steps: int = 50,
                wrap: Optional[Callable[[gym.Env], gym.Env]] = None) -> str:
    """``wrap`` (e.g. cartpole_pomdp's ``HideVelocity``) changes what is observed and recorded."""
    env = gym.make(env_id, max_episode_steps=max_steps)
    env = env if wrap is None else wrap(env)
    env.action_space.seed(0)
    eps = []
    for k in range(episodes):
        obs, _ = env.reset(seed=k)
        rows = []
        while True:
            action = env.action_space.sample()
            nxt, reward, terminated, truncated, _ = env.step(action)
            rows.append({"obs": obs, "action": action, "reward": float(reward), "next_obs": nxt,
                         "terminated": terminated, "truncated": truncated})
            obs = nxt
            if terminated or truncated:
                break
        eps.append({key: np.stack([np.asarray(r[key]) for r in rows]) for key in rows[0]})
    out = write_demo_dataset(path, eps, env.observation_space, env.action_space, env_id=env_id)
    env.close()
    return out
