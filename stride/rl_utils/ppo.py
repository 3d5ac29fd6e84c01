"""PPO's clipped surrogate objective (Schulman et al., 2017, "Proximal Policy Optimization
Algorithms", eq. 7), clipped value loss, the KL of the adaptive penalty (sec. 4) and diagnostics,
as pure functions.

Policy outputs are given as DI-engine's ``logit``: a ``(B, A)`` tensor of logits for a discrete
action space, or ``{'mu': (B, A), 'sigma': (B, A)}`` for a diagonal Gaussian.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Dict, Optional, Tuple, Union

import torch
from torch.distributions import Categorical, Distribution, Independent, Normal
from ..utils.errors import ConfigError

Logit = Union[torch.Tensor, Dict[str, torch.Tensor]]

PPOLoss = namedtuple("PPOLoss", ["policy_loss", "value_loss", "entropy_loss"])
PPOInfo = namedtuple("PPOInfo", ["approx_kl", "clipfrac"])


def policy_distribution(logit: Logit) -> Distribution:
    """``Categorical`` for a logits tensor, ``Independent(Normal(mu, sigma), 1)`` for a ``{'mu', 'sigma'}`` dict."""
    if isinstance(logit, dict):
        return Independent(Normal(logit["mu"], logit["sigma"]), 1)
    return Categorical(logits=logit)


def kl_divergence(logit_old: Logit, logit_new: Logit) -> torch.Tensor:
    """Per-sample ``KL(pi_old || pi_new)`` in closed form (categorical logits, or ``{'mu', 'sigma'}`` of a
    diagonal Gaussian: summed over action dimensions); differentiable in ``logit_new``, not in the old one."""
    old = policy_distribution(logit_old.detach() if isinstance(logit_old, torch.Tensor)
                              else {k: v.detach() for k, v in logit_old.items()})
    return torch.distributions.kl_divergence(old, policy_distribution(logit_new))


def adapt_kl_coef(beta: float, kl: float, kl_target: float) -> float:
    """The adaptive KL penalty's next beta (Schulman et al., 2017, sec. 4): doubled when the KL of the
    last update exceeds ``1.5 * kl_target``, halved when it is below ``kl_target / 1.5``, else kept."""
    if kl > 1.5 * kl_target:
        return beta * 2.0
    if kl < kl_target / 1.5:
        return beta / 2.0
    return beta


def value_error(value_new: torch.Tensor, value_old: torch.Tensor, return_: torch.Tensor,
                value_clip_ratio: Optional[float]) -> torch.Tensor:
    """``0.5 * mean(max((V - R)^2, (V_old + clip(V - V_old, -c, c) - R)^2))``; unclipped when ``c`` is None."""
    loss = (value_new - return_).pow(2)
    if value_clip_ratio is not None:
        clipped = value_old + (value_new - value_old).clamp(-value_clip_ratio, value_clip_ratio)
        loss = torch.max(loss, (clipped - return_).pow(2))
    return 0.5 * loss.mean()


def _ppo_error(dist_new: Distribution, dist_old: Distribution, action: torch.Tensor, value_new: torch.Tensor,
               value_old: torch.Tensor, adv: torch.Tensor, return_: torch.Tensor, clip_ratio: float,
               value_clip_ratio: Optional[float], dual_clip: Optional[float]) -> Tuple[PPOLoss, PPOInfo]:
    if dual_clip is not None and dual_clip <= 1.0:
        raise ConfigError(f"dual_clip must be > 1, got {dual_clip}")
    logp_new = dist_new.log_prob(action)
    log_ratio = logp_new - dist_old.log_prob(action).detach()
    ratio = log_ratio.exp()
    surr = torch.min(ratio * adv, ratio.clamp(1.0 - clip_ratio, 1.0 + clip_ratio) * adv)
    if dual_clip is not None:  # Ye et al. (2020): bound the loss of negative-advantage samples
        surr = torch.where(adv < 0, torch.max(surr, dual_clip * adv), surr)
    policy_loss = -surr.mean()
    loss = PPOLoss(policy_loss, value_error(value_new, value_old, return_, value_clip_ratio), dist_new.entropy().mean())
    with torch.no_grad():
        approx_kl = ((ratio - 1.0) - log_ratio).mean()  # k3 estimator of KL(old || new): >= 0, low variance
        clipfrac = ((ratio - 1.0).abs() > clip_ratio).float().mean()
    return loss, PPOInfo(approx_kl, clipfrac)


def ppo_error(logit_new: torch.Tensor, logit_old: torch.Tensor, action: torch.Tensor, value_new: torch.Tensor,
              value_old: torch.Tensor, adv: torch.Tensor, return_: torch.Tensor, clip_ratio: float = 0.2,
              value_clip_ratio: Optional[float] = 0.2, dual_clip: Optional[float] = None) -> Tuple[PPOLoss, PPOInfo]:
    """PPO loss terms for a discrete action space.

    ``policy_loss = -mean(min(r A, clip(r, 1-eps, 1+eps) A))`` with ``r = pi_new(a|s) / pi_old(a|s)``;
    ``value_loss`` as :func:`value_error`; ``entropy_loss`` = mean entropy of ``pi_new`` (the caller
    subtracts it with its weight). Advantage normalisation is the caller's job.

    Args:
        logit_new / logit_old: (B, A) logits of the current / behaviour policy.
        action: (B,) int64 actions taken.
        value_new / value_old: (B,) current / behaviour-time values; return_: (B,) value targets.
        adv: (B,) advantages.
        clip_ratio: eps of the surrogate; value_clip_ratio: clip of the value update (None: no clip).
        dual_clip: optional c > 1 bounding the loss of negative-advantage samples (dual-clip PPO).

    Returns:
        ``PPOLoss(policy_loss, value_loss, entropy_loss)`` and ``PPOInfo(approx_kl, clipfrac)`` (scalars).
    """
    return _ppo_error(Categorical(logits=logit_new), Categorical(logits=logit_old), action.long(), value_new,
                      value_old, adv, return_, clip_ratio, value_clip_ratio, dual_clip)


def ppo_error_continuous(logit_new: Dict[str, torch.Tensor], logit_old: Dict[str, torch.Tensor], action: torch.Tensor,
                         value_new: torch.Tensor, value_old: torch.Tensor, adv: torch.Tensor, return_: torch.Tensor,
                         clip_ratio: float = 0.2, value_clip_ratio: Optional[float] = 0.2,
                         dual_clip: Optional[float] = None) -> Tuple[PPOLoss, PPOInfo]:
    """:func:`ppo_error` for a diagonal Gaussian policy: ``logit_*`` are ``{'mu', 'sigma'}`` of shape
    (B, A), ``action`` (B, A) the raw (unclipped) samples; log-probs and entropies sum over action dims."""
    return _ppo_error(policy_distribution(logit_new), policy_distribution(logit_old), action, value_new, value_old,
                      adv, return_, clip_ratio, value_clip_ratio, dual_clip)
