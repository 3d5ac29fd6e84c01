"""V-trace (Espeholt et al., 2018, "IMPALA: Scalable Distributed Deep-RL with Importance Weighted
Actor-Learner Architectures", section 4) and the IMPALA loss, as pure functions over time-major
``[T, B]`` tensors.

``vs_t = V(x_t) + sum_{s>=t} (prod_{i=t}^{s-1} gamma_i c_i) delta_s``, with
``delta_s = rho_s (r_s + gamma_s V(x_{s+1}) - V(x_s))``, ``rho_s = min(rho_clip, pi/mu)``,
``c_i = lambda * min(c_clip, pi/mu)``, and the policy-gradient advantage
``rho_pg_t (r_t + gamma_t vs_{t+1} - V(x_t))``, computed by the backward recursion
``vs_t - V(x_t) = delta_t + gamma_t c_t (vs_{t+1} - V(x_{t+1}))``.

Better than the peers on purpose:
- Termination and truncation stay apart: the discount is ``gamma * (1 - terminated)``, so a step
  that hit a time limit still bootstraps from the value of its true final observation (DI-engine's
  ``vtrace_error`` takes one ``done`` for both; RLlib's ``vtrace_torch`` takes discounts and leaves
  it to the caller, whose sample batches fold truncation into ``dones``).
- An optional ``mask`` makes padded steps of a short unroll exact no-ops (their ratios are 0), so an
  episode that ends inside an unroll needs neither a special case nor wrong bootstrap values.
- Tested against a slow per-element reference implementation and hand-computed numbers.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import torch

from .ppo import Logit, policy_distribution


class VTraceReturns(NamedTuple):
    """``vs``: the v-trace value targets; ``pg_advantages``: the policy-gradient advantages. Both ``[T, B]``."""

    vs: torch.Tensor
    pg_advantages: torch.Tensor


class VTraceLoss(NamedTuple):
    """IMPALA's loss terms (scalars); the caller weights and sums them (entropy is subtracted)."""

    policy_loss: torch.Tensor
    value_loss: torch.Tensor
    entropy_loss: torch.Tensor


def _clip(x: torch.Tensor, bound: Optional[float]) -> torch.Tensor:
    return x if bound is None else x.clamp(max=bound)


@torch.no_grad()
def vtrace(target_log_prob: torch.Tensor, behaviour_log_prob: torch.Tensor, reward: torch.Tensor,
           value: torch.Tensor, bootstrap_value: torch.Tensor, terminated: torch.Tensor, gamma: float,
           lambda_: float = 1.0, rho_clip: Optional[float] = 1.0, c_clip: Optional[float] = 1.0,
           rho_pg_clip: Optional[float] = 1.0, mask: Optional[torch.Tensor] = None) -> VTraceReturns:
    """V-trace targets and policy-gradient advantages (no gradient flows through them).

    Args:
        target_log_prob / behaviour_log_prob: ``[T, B]`` log pi(a_t|x_t) of the learner's / the
            collecting policy.
        reward: ``[T, B]`` rewards r_t.
        value: ``[T, B]`` V(x_t); bootstrap_value: ``[B]`` V(x_T), the value after the last step.
        terminated: ``[T, B]`` 1 where step t ended its episode in a terminal state (discount 0 after
            it); a truncated step is not terminated and bootstraps from V(x_{t+1}).
        gamma: discount; lambda_: the trace weight of ``c`` (1: the paper's v-trace).
        rho_clip / c_clip / rho_pg_clip: upper clips of the ratios in delta, in the traces and in the
            policy-gradient advantage (None: unclipped).
        mask: ``[T, B]`` 1 for real steps, 0 for padding after an unroll's last real step; a padded
            step has ratio 0, so ``vs = V`` there and it adds nothing to the steps before it.
    """
    rho = torch.exp(target_log_prob - behaviour_log_prob)
    if mask is not None:
        rho = torch.where(mask.bool(), rho, torch.zeros_like(rho))
    discount = gamma * (1.0 - terminated.to(value.dtype))
    next_value = torch.cat([value[1:], bootstrap_value.unsqueeze(0)], dim=0)
    delta = _clip(rho, rho_clip) * (reward + discount * next_value - value)
    trace = discount * lambda_ * _clip(rho, c_clip)
    vs_minus_v = torch.empty_like(value)
    acc = torch.zeros_like(bootstrap_value)
    for t in range(value.shape[0] - 1, -1, -1):
        acc = delta[t] + trace[t] * acc
        vs_minus_v[t] = acc
    vs = value + vs_minus_v
    next_vs = torch.cat([vs[1:], bootstrap_value.unsqueeze(0)], dim=0)
    pg_advantages = _clip(rho, rho_pg_clip) * (reward + discount * next_vs - value)
    return VTraceReturns(vs, pg_advantages)


def vtrace_error(logit: Logit, action: torch.Tensor, behaviour_log_prob: torch.Tensor, value: torch.Tensor,
                 reward: torch.Tensor, terminated: torch.Tensor, gamma: float, lambda_: float = 1.0,
                 rho_clip: Optional[float] = 1.0, c_clip: Optional[float] = 1.0, rho_pg_clip: Optional[float] = 1.0,
                 mask: Optional[torch.Tensor] = None) -> VTraceLoss:
    """IMPALA's loss over time-major unrolls: ``policy_loss = -mean(pg_adv * log pi(a|x))``,
    ``value_loss = 0.5 * mean((vs - V)^2)``, ``entropy_loss = mean(H(pi))``, means over real
    (unmasked) steps.

    Args:
        logit: ``[T, B, A]`` logits (discrete) or ``{'mu', 'sigma'}`` of that shape (diagonal Gaussian)
            of the learner's policy at x_0..x_{T-1}.
        action: ``[T, B]`` int actions or ``[T, B, A]`` float actions taken.
        behaviour_log_prob: ``[T, B]`` log mu(a_t|x_t) recorded when collecting.
        value: ``[T + 1, B]`` the learner's V(x_0)..V(x_T) (the last one bootstraps).
        reward, terminated, mask, gamma, lambda_ and the clips: as :func:`vtrace`.
    """
    dist = policy_distribution(logit)
    log_prob = dist.log_prob(action if isinstance(logit, dict) else action.long())
    returns = vtrace(log_prob.detach(), behaviour_log_prob, reward, value[:-1].detach(), value[-1].detach(),
                     terminated, gamma, lambda_, rho_clip, c_clip, rho_pg_clip, mask)
    weight = torch.ones_like(reward) if mask is None else mask.to(reward.dtype)
    n = weight.sum().clamp(min=1.0)
    policy_loss = -(returns.pg_advantages * log_prob * weight).sum() / n
    value_loss = 0.5 * ((returns.vs - value[:-1]).pow(2) * weight).sum() / n
    entropy_loss = (dist.entropy() * weight).sum() / n
    return VTraceLoss(policy_loss, value_loss, entropy_loss)
