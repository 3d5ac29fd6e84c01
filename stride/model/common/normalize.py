"""``RunningNorm``: observation normalisation whose statistics travel in the model's checkpoint.

Stable-Baselines3's ``VecNormalize`` keeps its running mean/variance in the env wrapper, pickled
to a separate file that users forget to save or load (a policy evaluated without it sees raw
observations and fails silently). Stride keeps them where the checkpoint already goes, on purpose:
``RunningNorm`` is an ``nn.Module`` whose statistics are *buffers*, and the policy attaches it to
its model as the submodule ``obs_norm`` (``policy.obs_norm=True``), so ``model.state_dict()`` --
which every learn/collect/eval state dict and every checkpoint already holds -- carries them, and
a checkpoint loaded into a model without them (or the reverse) fails loudly on the missing keys.

The *policy* decides when they move, because only it knows which mode a forward belongs to:
observations seen by the collect mode update them; eval forwards and learn batches are only
normalised, with the same statistics (a learn batch stores raw observations and is normalised when
it is learnt from, as SB3 does with its replay buffer). The module itself never updates in
``forward``: :meth:`update` is the one call that changes it.

Statistics are float64 and merged per batch with Chan et al.'s parallel update (Welford's for a
batch of one), so they equal NumPy's ``mean``/``var`` over the same stream up to rounding;
normalised values are ``clip((x - mean) / sqrt(var + eps), -clip, clip)``, returned as float32.
"""

from __future__ import annotations

from typing import Sequence, Union

import torch
from torch import nn

__all__ = ["RunningNorm"]


class RunningNorm(nn.Module):
    """Running mean / variance of ``shape``-sized observations, and ``normalize(x)`` with them.

    ``count`` starts at 0 (mean 0, var 1: the identity before any update, up to ``eps``). The
    variance is the population one (NumPy's ``var`` with ``ddof=0``).
    """

    mean: torch.Tensor
    var: torch.Tensor
    count: torch.Tensor

    def __init__(self, shape: Union[int, Sequence[int]], clip: float = 10.0, eps: float = 1e-8) -> None:
        super().__init__()
        shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
        if clip <= 0 or eps <= 0:
            raise ValueError(f"RunningNorm needs clip > 0 and eps > 0, got clip={clip}, eps={eps}")
        self.shape = shape
        self.clip = float(clip)
        self.eps = float(eps)
        self.register_buffer("mean", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("var", torch.ones(shape, dtype=torch.float64))
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        """Merge a batch ``x`` of shape ``(B, *shape)`` into the statistics (Chan's parallel update)."""
        x = x.detach().to(device=self.mean.device, dtype=torch.float64).reshape(-1, *self.shape)
        n = x.shape[0]
        if n == 0:
            return
        b_mean = x.mean(0)
        b_var = x.var(0, unbiased=False)
        total = self.count + n
        delta = b_mean - self.mean
        m2 = self.var * self.count + b_var * n + delta.pow(2) * self.count * n / total
        self.mean.add_(delta * n / total)
        self.var.copy_(m2 / total)
        self.count.copy_(total)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        """``clip((x - mean) / sqrt(var + eps), -clip, clip)`` as float32, on ``x``'s device."""
        mean = self.mean.to(x.device)
        std = torch.sqrt(self.var.to(x.device) + self.eps)
        out = ((x.to(torch.float64) - mean) / std).clamp_(-self.clip, self.clip)
        return out.to(torch.float32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise only (never updates; :meth:`update` does)."""
        return self.normalize(x)

    def extra_repr(self) -> str:
        return f"shape={self.shape}, clip={self.clip}, eps={self.eps}, count={int(self.count.item())}"
