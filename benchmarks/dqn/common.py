"""Shared helpers for the DQN CartPole benchmark contestants (no Stride, no SB3 imports here).

Every contestant runs in its own fresh process, calls :func:`setup_process` first (one torch
thread, seeded RNGs) and measures *process CPU time* (``time.process_time``: user + system of
all threads of this process), never wall time.
"""

from __future__ import annotations

import json
import os
import random
import resource
import sys
import time
from typing import Callable, List, Optional

import numpy as np

STOP_VALUE = 195.0
EVAL_EPISODES = 100


def setup_process(seed: int) -> dict:
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return {"torch_threads": torch.get_num_threads(), "torch": torch.__version__}


def cpu() -> float:
    """Process CPU seconds (user + system, all threads of this process)."""
    return time.process_time()


def rusage_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def evaluate_batched(act_fn: Callable[[np.ndarray], np.ndarray], n_episodes: int, n_envs: int,
                     seed: int, env_id: str = "CartPole-v1") -> List[float]:
    """Return of ``n_episodes`` episodes with deterministic actions on ``n_envs`` separate envs.

    Episodes are balanced over envs (``n_episodes / n_envs`` each, the remainder on the first
    envs), each env seeded once from ``seed`` so every evaluation replays the same episodes.
    ``act_fn`` maps a (k, obs_dim) float32 batch to k actions.
    """
    import gymnasium as gym

    envs = [gym.make(env_id) for _ in range(n_envs)]
    quota = [n_episodes // n_envs + (1 if i < n_episodes % n_envs else 0) for i in range(n_envs)]
    obs = [envs[i].reset(seed=seed + 1000 * i)[0] for i in range(n_envs)]
    ret = [0.0] * n_envs
    returns: List[float] = []
    active = [i for i in range(n_envs) if quota[i] > 0]
    while active:
        batch = np.asarray([obs[i] for i in active], dtype=np.float32)
        actions = act_fn(batch)
        still = []
        for i, a in zip(active, actions):
            o, r, term, trunc, _ = envs[i].step(int(a))
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


def emit(result: dict, out: Optional[str]) -> None:
    text = json.dumps(result, sort_keys=True)
    if out:
        tmp = out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, out)
    print("RESULT " + text, flush=True)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
