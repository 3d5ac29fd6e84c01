"""Temporal-difference errors."""

from __future__ import annotations

from typing import Optional, Tuple

import torch
import torch.nn.functional as F

from ..utils.errors import ConfigError


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
    need_td_abs: bool = True,
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
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

        need_td_abs: compute the absolute TD error (priorities); None is returned in its place otherwise.

    Returns:
        (scalar loss, (B,) absolute TD error for priorities, or None).
    """
    if loss_type not in ("mse", "huber"):
        raise ConfigError(f"unknown loss_type '{loss_type}'; valid choices: huber, mse")
    q_sa = q.gather(1, action.long().unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        next_v = next_q_target.gather(1, next_action.long().unsqueeze(1)).squeeze(1)
        target = reward + value_gamma * (1.0 - done.float()) * next_v
        td_abs = (q_sa.detach() - target).abs() if need_td_abs else None
    # one fused loss op in the graph (this runs every gradient step, where per-op overhead counts)
    if weight is None:
        if loss_type == "mse":
            return 0.5 * F.mse_loss(q_sa, target), td_abs
        return F.smooth_l1_loss(q_sa, target), td_abs
    if loss_type == "mse":
        per_sample = F.mse_loss(q_sa, target, reduction="none")
        return 0.5 * (per_sample * weight).mean(), td_abs
    return (F.smooth_l1_loss(q_sa, target, reduction="none") * weight).mean(), td_abs


def v_nstep_td_error(
    value: torch.Tensor,
    next_value: torch.Tensor,
    reward: torch.Tensor,
    done: torch.Tensor,
    value_gamma: torch.Tensor | float,
    weight: Optional[torch.Tensor] = None,
    loss_type: str = "mse",
) -> Tuple[torch.Tensor, torch.Tensor]:
    """n-step TD loss of a value that is already evaluated at the taken action: V(s), or Q(s, a) of
    a continuous-action critic (DDPG / TD3 / SAC).

    ``target = reward + value_gamma * (1 - done) * next_value`` (no gradient), ``done`` meaning
    *terminated*: a time-limit truncation still bootstraps. ``value`` may carry leading critic dims
    (twin critics: ``(2, B)``); every critic regresses on the same target and their losses are summed.

    Args:
        value: (B,) or (K, B) predictions.
        next_value: (B,) bootstrap value at the n-th next observation (e.g. the min of the target
            critics, minus ``alpha * log_prob`` for SAC -- see :func:`min_q_value`).
        reward, done: (B,) discounted n-step reward sum and 0/1 termination flag.
        value_gamma: scalar or (B,) bootstrap discount (gamma ** real steps).
        weight: optional (B,) importance-sampling weights.
        loss_type: 'mse' (0.5 * squared error) or 'huber'.

    Returns:
        (scalar loss: per-critic batch means, summed over critics; (B,) absolute TD error averaged
        over critics, for priorities).
    """
    with torch.no_grad():
        target = reward + value_gamma * (1.0 - done.float()) * next_value
    td = value - target
    if loss_type == "mse":
        per_sample = 0.5 * td.pow(2)
    elif loss_type == "huber":
        per_sample = torch.nn.functional.smooth_l1_loss(value, target.expand_as(value), reduction="none")
    else:
        raise ConfigError(f"unknown loss_type '{loss_type}'; valid choices: huber, mse")
    if weight is not None:
        per_sample = per_sample * weight
    loss = per_sample.mean(-1).sum()
    td_abs = td.detach().abs()
    return loss, td_abs.mean(0) if td_abs.dim() > 1 else td_abs


def min_q_value(
    q: torch.Tensor, log_prob: Optional[torch.Tensor] = None, alpha: torch.Tensor | float = 0.0
) -> torch.Tensor:
    """The bootstrap value of continuous-action critics: ``min_k q[k] - alpha * log_prob``.

    Clipped double-Q (Fujimoto et al., 2018) over the leading critic dim when ``q`` is (K, B) (a
    (B,) ``q`` is used as is), minus the entropy term of soft Q-learning (Haarnoja et al., 2018)
    when ``log_prob`` of the next action is given.
    """
    v = q.min(0).values if q.dim() > 1 else q
    if log_prob is not None:
        v = v - alpha * log_prob
    return v
