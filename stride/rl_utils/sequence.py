"""R2D2's sequence math (Kapturowski et al., 2019): value rescaling, n-step targets inside a stored
sequence, the double-Q TD error over it, and the mixed max/mean sequence priority.

Sequences are time-major ``(T, B)`` tensors of rows as ``stride.data.SequenceAdder`` writes them:
row ``t`` holds ``s_t``, ``a_t``, ``r_t``, ``done[t]`` (``a_t`` terminated the episode), ``last[t]``
(``s_t`` is the episode's final observation: a truncated episode bootstraps from it) and ``mask[t]``
(not padding). A row's n-step window stops at the episode end and never reaches past the sequence:
a row whose window does is not a target here (it is one in the next, overlapping sequence).
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple

import torch
import torch.nn.functional as F

from ..utils.errors import ConfigError

#: h(x)'s epsilon (Pohlen et al., 2018; R2D2's value)
RESCALE_EPS = 1e-3


def value_rescale(x: torch.Tensor, eps: float = RESCALE_EPS) -> torch.Tensor:
    """``h(x) = sign(x) * (sqrt(|x| + 1) - 1) + eps * x``: squashes large returns so one network
    fits Q values of very different scales (Pohlen et al., 2018)."""
    return torch.sign(x) * (torch.sqrt(x.abs() + 1.0) - 1.0) + eps * x


def inv_value_rescale(x: torch.Tensor, eps: float = RESCALE_EPS) -> torch.Tensor:
    """The exact inverse of :func:`value_rescale`:
    ``sign(x) * (((sqrt(1 + 4 eps (|x| + 1 + eps)) - 1) / (2 eps)) ** 2 - 1)``, computed in float64:
    the division by ``2 eps`` magnifies float32 rounding 500 times (1e-4 off at x = 99)."""
    x64 = x.double()
    root = (torch.sqrt(1.0 + 4.0 * eps * (x64.abs() + 1.0 + eps)) - 1.0) / (2.0 * eps)
    return (torch.sign(x64) * (root.pow(2) - 1.0)).to(x.dtype)


class SequenceNStep(NamedTuple):
    """Per row ``(T, B)``: the discounted n-step reward sum, the bootstrap discount ``gamma ** k``,
    whether the window ended in termination, the row to bootstrap from (``t + k``, clamped into the
    sequence) and whether the row has a target inside this sequence."""

    reward: torch.Tensor
    value_gamma: torch.Tensor
    done: torch.Tensor
    boot: torch.Tensor
    valid: torch.Tensor


def _shift(x: torch.Tensor, j: int, fill: float | bool) -> torch.Tensor:
    """``x[t + j]`` at row ``t`` (``fill`` past the end)."""
    if j == 0:
        return x
    return torch.cat([x[j:], x.new_full((min(j, x.shape[0]), *x.shape[1:]), fill)])[: x.shape[0]]


def sequence_nstep_return(reward: torch.Tensor, done: torch.Tensor, last: torch.Tensor, mask: torch.Tensor,
                          gamma: float, nstep: int) -> SequenceNStep:
    """n-step targets of every row of a batch of sequences (all ``(T, B)``; see the module docstring).

    Row ``t`` (a real step: ``mask`` and not ``last``) sums ``gamma ** i * r_{t+i}`` for ``i < k``,
    ``k = nstep`` or fewer when the episode ends first (``a_{t+k-1}`` terminated, or ``s_{t+k}`` is
    the final observation); it bootstraps from row ``t + k`` unless terminated. It is ``valid`` only
    when every row it needs lies inside the sequence."""
    steps = reward.shape[0]
    done, last = done.bool(), last.bool()
    alive = mask.bool() & ~last  # rows still summing
    known = torch.ones_like(alive)
    ret = torch.zeros_like(reward, dtype=torch.float32)
    scale = torch.ones_like(ret)
    k = torch.zeros_like(alive, dtype=torch.long)
    term = torch.zeros_like(alive)
    inside = torch.ones_like(alive)
    for j in range(nstep):
        known &= ~alive | _shift(inside, j, False)
        ret = ret + torch.where(alive, scale * _shift(reward.float(), j, 0.0), 0.0)
        k += alive.long()
        scale = torch.where(alive, scale * gamma, scale)
        d = _shift(done, j, False)
        term |= alive & d
        alive = alive & ~d & ~_shift(last, j + 1, False)
    boot = torch.arange(steps, device=reward.device).unsqueeze(-1) + k
    valid = mask.bool() & ~last & known & (term | (boot < steps))
    return SequenceNStep(ret, scale, term, boot.clamp(max=steps - 1), valid)


def sequence_learnt_rows(last: torch.Tensor, start: torch.Tensor, burnin: int, unroll: int) -> torch.Tensor:
    """``(T, B)``: the rows a sequence learns from, so that overlapping sequences (one every
    ``unroll`` rows, ``burnin + unroll + nstep`` long) learn each step of an episode exactly once.

    Rows ``[burnin, burnin + unroll)``; from row 0 when the sequence starts its episode (``start``,
    ``(B,)``: its stored state is the exact initial one, no burn-in needed); and up to the end in
    the episode's last sequence (it holds the final observation, ``last``): no later sequence takes
    the steps past ``burnin + unroll``. Combine with :func:`sequence_nstep_return`'s ``valid``."""
    rows = torch.arange(last.shape[0], device=last.device).unsqueeze(-1)
    return ((rows >= burnin) | start.bool().unsqueeze(0)) & ((rows < burnin + unroll) | last.bool().any(0, keepdim=True))


def q_sequence_td_error(q: torch.Tensor, q_target: torch.Tensor, action: torch.Tensor, nstep: SequenceNStep,
                        train: torch.Tensor, weight: Optional[torch.Tensor] = None, rescale: bool = True,
                        loss_type: str = "mse") -> Tuple[torch.Tensor, torch.Tensor]:
    """Double-Q n-step TD loss over sequences, with value rescaling (R2D2).

    ``target = h(R + gamma**k * (1 - done) * h^-1(q_target[t+k, argmax q[t+k]]))`` (``h`` the
    identity without ``rescale``); the loss of row ``t`` counts where ``train & nstep.valid``. Each
    sequence's loss is the mean over its counted rows, weighted by ``weight`` (IS, ``(B,)``), and
    the batch loss their mean.

    Args:
        q, q_target: (T, B, A) online and target Q values over the sequences.
        action: (T, B) actions taken.
        nstep: :func:`sequence_nstep_return` of the sequences.
        train: (T, B) rows this update learns from (R2D2: past the burn-in).

    Returns:
        (scalar loss, (T, B) absolute TD error, 0 where the row does not count).
    """
    if loss_type not in ("mse", "huber"):
        raise ConfigError(f"unknown loss_type '{loss_type}'; valid choices: huber, mse")
    count = (train.bool() & nstep.valid).float()
    q_sa = q.gather(-1, action.long().unsqueeze(-1)).squeeze(-1)
    with torch.no_grad():
        boot = nstep.boot.unsqueeze(-1).expand(-1, -1, q.shape[-1])
        next_action = q.detach().gather(0, boot).argmax(-1, keepdim=True)
        next_v = q_target.gather(0, boot).gather(-1, next_action).squeeze(-1)
        if rescale:
            next_v = inv_value_rescale(next_v)
        target = nstep.reward + nstep.value_gamma * (~nstep.done).float() * next_v
        if rescale:
            target = value_rescale(target)
    if loss_type == "mse":
        per_row = 0.5 * (q_sa - target).pow(2)
    else:
        per_row = F.smooth_l1_loss(q_sa, target, reduction="none")
    per_seq = (per_row * count).sum(0) / count.sum(0).clamp(min=1.0)
    if weight is not None:
        per_seq = per_seq * weight
    return per_seq.mean(), (q_sa.detach() - target).abs() * count


def sequence_priority(td_abs: torch.Tensor, mask: torch.Tensor, eta: float = 0.9) -> torch.Tensor:
    """R2D2's sequence priority ``eta * max_t |td| + (1 - eta) * mean_t |td|`` over the rows in
    ``mask`` (``(T, B)`` each; a sequence with no such row gets 0)."""
    m = mask.bool()
    count = m.sum(0)
    top = torch.where(m, td_abs, torch.zeros_like(td_abs)).max(0).values
    mean = torch.where(m, td_abs, torch.zeros_like(td_abs)).sum(0) / count.clamp(min=1)
    return torch.where(count > 0, eta * top + (1.0 - eta) * mean, torch.zeros_like(mean))
