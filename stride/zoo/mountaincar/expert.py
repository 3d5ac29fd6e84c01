"""MountainCar's scripted expert and its demonstrations: push in the direction the car moves
(``action 2`` when the velocity is >= 0, else ``0``), the energy-pumping controller that reaches
the flag in 114-124 steps in ten recorded episodes (return -120.6 on average; the time limit is 200).

``write_expert_demo(path, episodes, seed)`` rolls it out and writes a Minari dataset with
:func:`stride.data.demo.write_demo_dataset` -- the writer ``collect_demo_data`` uses -- so the
demonstrations reach a run the way every other dataset does: ``policy.collect.data_path`` and
:func:`stride.data.demo.load_demo_dataset`. A scripted controller rather than a trained one: it
needs no training run of its own (a DQN with rl-zoo3-like settings still scored -200 in every screen
at 95k env steps here), and it plays the role of the human demonstrator of the R2D3 paper.
"""

from __future__ import annotations

from typing import Any, Dict, List

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ...data.demo import stack_episode, write_demo_dataset

ENV_ID = "MountainCar-v0"


def energy_pumping_action(obs: npt.NDArray[np.float32]) -> int:
    """Accelerate right (2) while moving right or at rest, else left (0)."""
    return 2 if float(np.asarray(obs)[1]) >= 0.0 else 0


def write_expert_demo(path: str, episodes: int = 10, seed: int = 1000) -> str:
    """``episodes`` whole episodes of the scripted expert (episode ``k`` reset with ``seed + k``)
    written as a Minari dataset at ``path`` (never overwritten); returns its path."""
    if episodes < 1:
        raise ValueError(f"the number of demonstration episodes must be >= 1, got {episodes}")
    env = gym.make(ENV_ID)
    rows: List[Dict[str, Any]] = []
    try:
        for k in range(episodes):
            obs, _ = env.reset(seed=seed + k)
            steps: List[Dict[str, Any]] = []
            done = False
            while not done:
                action = energy_pumping_action(obs)
                nxt, reward, terminated, truncated, _ = env.step(action)
                steps.append({"obs": obs, "action": np.int64(action), "reward": np.float32(reward), "next_obs": nxt,
                              "terminated": bool(terminated), "truncated": bool(truncated)})
                obs, done = nxt, bool(terminated or truncated)
            rows.append(stack_episode(steps))
        return write_demo_dataset(path, rows, env.observation_space, env.action_space, env_id=ENV_ID, seed=seed,
                                  algorithm_name="scripted-energy-pumping",
                                  episode_seeds=[seed + k for k in range(episodes)])
    finally:
        env.close()
