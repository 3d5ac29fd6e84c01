"""Temporal-difference errors."""

from __future__ import annotations

from typing import Optional, Tuple

import torch


def q_nstep_td_error(
    q: torch.Tensor,
    next_q_target: torch.Tensor,
    action: torch.Tensor,
    next_action: torch.Tensor,
    reward: torch.Tensor,
    done: torch.Tensor,
    value_gamma: torch.Tensor | float,
    weight: Optional[torch.Tensor] = None,
    loss_type: str = "mse",
) -> Tuple[torch.Tensor, torch.Tensor]:
    """(Double) DQN n-step TD loss.

    ``target = reward + value_gamma * (1 - done) * next_q_target[next_action]`` where ``reward`` is
    the discounted n-step sum, ``value_gamma`` = gamma ** (real steps in the window) and ``done``
    means *terminated* (a truncated episode still bootstraps). Double DQN picks ``next_action``
    with the online network and evaluates it with the target network.

    Args:
        q: (B, A) online Q values at ``obs``.
        next_q_target: (B, A) target-network Q values at the n-th next observation.
        action, next_action: (B,) int64.
        reward, done: (B,) float (done as 0/1).
        value_gamma: scalar or (B,) bootstrap discount.
        weight: optional (B,) importance-sampling weights.
        loss_type: 'mse' (0.5 * squared error, as DQN papers) or 'huber'.

    Returns:
        (scalar loss, (B,) absolute TD error for priorities).
    """
    q_sa = q.gather(1, action.long().unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_v = next_q_target.gather(1, next_action.long().unsqueeze(1)).squeeze(1)
        target = reward + value_gamma * (1.0 - done.float()) * next_v
    td = q_sa - target
    if loss_type == "mse":
        per_sample = 0.5 * td.pow(2)
    elif loss_type == "huber":
        per_sample = torch.nn.functional.smooth_l1_loss(q_sa, target, reduction="none")
    else:
        raise ValueError(f"unknown loss_type '{loss_type}'; valid choices: huber, mse")
    if weight is not None:
        per_sample = per_sample * weight
    return per_sample.mean(), td.detach().abs()
