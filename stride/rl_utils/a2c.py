"""Advantage actor-critic loss (Mnih et al., 2016, "Asynchronous Methods for Deep Reinforcement
Learning", the synchronous variant), as a pure function."""

from __future__ import annotations

from collections import namedtuple
from typing import Dict, Union

import torch

from .ppo import policy_distribution

A2CLoss = namedtuple("A2CLoss", ["policy_loss", "value_loss", "entropy_loss"])


def a2c_error(logit: Union[torch.Tensor, Dict[str, torch.Tensor]], action: torch.Tensor, value: torch.Tensor,
              adv: torch.Tensor, return_: torch.Tensor) -> A2CLoss:
    """``policy_loss = -mean(log pi(a|s) * A)``, ``value_loss = 0.5 * mean((V - R)^2)``,
    ``entropy_loss = mean(H(pi))`` (the caller subtracts it with its weight).

    Args:
        logit: (B, A) logits (discrete) or ``{'mu', 'sigma'}`` of shape (B, A) (diagonal Gaussian).
        action: (B,) int64 or (B, A) float actions taken.
        value: (B,) current values; adv: (B,) advantages (treated as constants); return_: (B,) targets.
    """
    dist = policy_distribution(logit)
    log_prob = dist.log_prob(action if isinstance(logit, dict) else action.long())
    policy_loss = -(log_prob * adv.detach()).mean()
    value_loss = 0.5 * (value - return_.detach()).pow(2).mean()
    return A2CLoss(policy_loss, value_loss, dist.entropy().mean())
