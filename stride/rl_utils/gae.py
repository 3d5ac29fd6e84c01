"""Generalized Advantage Estimation (Schulman et al., 2016)."""

from __future__ import annotations

from typing import Optional

import torch


def get_gae(
    value: torch.Tensor,
    next_value: torch.Tensor,
    reward: torch.Tensor,
    done: torch.Tensor,
    gamma: float = 0.99,
    gae_lambda: float = 0.95,
    traj_flag: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """GAE advantages over time (dim 0; extra dims are batch).

    ``delta_t = r_t + gamma * (1 - done_t) * V(s_{t+1}) - V(s_t)``;
    ``A_t = delta_t + gamma * lambda * (1 - end_t) * A_{t+1}``.
    ``done`` means *terminated* (no bootstrap); ``traj_flag`` marks every episode end including
    truncation (default: ``done``), where accumulation stops but ``next_value`` -- the value of the
    true final observation -- is still used. That is the bootstrap-on-truncation rule.
    """
    if traj_flag is None:
        traj_flag = done
    not_done = 1.0 - done.float()
    not_end = 1.0 - traj_flag.float()
    delta = reward + gamma * not_done * next_value - value
    factor = gamma * gae_lambda
    if delta.dim() == 1 and delta.device.type == "cpu":
        # one flat sequence (the collector's concatenated segments, kept apart by traj_flag): the
        # recursion on Python floats is ~40x faster than one tiny tensor op per step
        d, keep = delta.tolist(), (factor * not_end).tolist()
        out = [0.0] * len(d)
        running = 0.0
        for t in range(len(d) - 1, -1, -1):
            running = d[t] + keep[t] * running
            out[t] = running
        return torch.tensor(out, dtype=delta.dtype)
    adv = torch.zeros_like(delta)
    acc = torch.zeros_like(delta[0])
    for t in range(delta.shape[0] - 1, -1, -1):
        acc = delta[t] + factor * not_end[t] * acc
        adv[t] = acc
    return adv
