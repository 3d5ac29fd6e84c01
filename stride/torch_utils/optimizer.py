"""Optimizer construction shared by the policies."""

from __future__ import annotations

from typing import Any, Iterable

import torch

#: devices whose Adam has a fused kernel that Stride uses
FUSED_DEVICES = ("cpu", "cuda")


def adam(params: Iterable[torch.Tensor], lr: float, **kwargs: Any) -> torch.optim.Adam:
    """``torch.optim.Adam`` with the fused kernel where the parameters' device has one, else ``foreach``.

    Why: PyTorch's default on CPU is the per-tensor loop; the fused kernel does the same update in
    one call. Process CPU per learner step (``benchmarks/learner_step``, min of 3, one thread):
    CartPole DQN 784 us fused / 930 foreach / 912 default; Pendulum SAC 3065 / 3708 / 3845. A
    subclass that called torch's private ``_fused_adam_`` kernel itself, skipping ``Adam.step``'s
    Python layers, was 10 % (DQN) and 7 % (SAC) faster per learner step, which is less on a whole
    run: not worth a private API. ``kwargs`` are Adam's (``eps``, ``weight_decay``, ...).
    """
    params = list(params)
    fused = bool(params) and all(p.device.type in FUSED_DEVICES and p.is_floating_point() for p in params)
    if fused:
        return torch.optim.Adam(params, lr=lr, fused=True, **kwargs)
    return torch.optim.Adam(params, lr=lr, foreach=True, **kwargs)
