"""Batched deterministic evaluation on separate gymnasium envs, discrete or continuous actions."""

from __future__ import annotations

from typing import Callable, List

import numpy as np


def evaluate_batched(act_fn: Callable[[np.ndarray], np.ndarray], n_episodes: int, n_envs: int,
                     seed: int, env_id: str = "CartPole-v1") -> List[float]:
    """Return of ``n_episodes`` episodes with deterministic actions on ``n_envs`` separate envs.

    Episodes are balanced over envs (``n_episodes / n_envs`` each, the remainder on the first
    envs), each env seeded once from ``seed`` (env ``i``: ``seed + 1000 * i``) so every evaluation
    replays the same episodes. ``act_fn`` maps a (k, obs_dim) float32 batch to k actions; they are
    passed to the env as ``int`` for a ``Discrete`` action space, as a float32 array otherwise.
    """
    import gymnasium as gym

    envs = [gym.make(env_id) for _ in range(n_envs)]
    discrete = isinstance(envs[0].action_space, gym.spaces.Discrete)
    quota = [n_episodes // n_envs + (1 if i < n_episodes % n_envs else 0) for i in range(n_envs)]
    obs = [envs[i].reset(seed=seed + 1000 * i)[0] for i in range(n_envs)]
    ret = [0.0] * n_envs
    returns: List[float] = []
    active = [i for i in range(n_envs) if quota[i] > 0]
    while active:
        actions = act_fn(np.asarray([obs[i] for i in active], dtype=np.float32))
        still = []
        for i, a in zip(active, actions):
            o, r, term, trunc, _ = envs[i].step(int(a) if discrete else np.asarray(a, dtype=np.float32))
            ret[i] += float(r)
            if term or trunc:
                returns.append(ret[i])
                ret[i] = 0.0
                quota[i] -= 1
                if quota[i] > 0:
                    o, _ = envs[i].reset()
                    still.append(i)
            else:
                still.append(i)
            obs[i] = o
        active = still
    for e in envs:
        e.close()
    return returns
