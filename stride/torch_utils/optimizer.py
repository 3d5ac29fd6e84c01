"""Optimizer construction shared by the policies."""

from __future__ import annotations

from typing import Any, Iterable

import torch

_FUSED_DEVICES = ("cpu", "cuda")


def adam(params: Iterable[torch.nn.Parameter], lr: float, **kwargs: Any) -> torch.optim.Adam:
    """``torch.optim.Adam`` with the fused kernel where the parameters' device has one.

    Why: PyTorch's default on CPU is the per-tensor loop; the fused kernel does the same update
    in one call, 3-4x faster for the small networks of classic control, where the optimizer
    step is a fifth of a DQN gradient step. Other devices (or non-float parameters) get the
    ``foreach`` implementation.
    """
    params = list(params)
    fused = bool(params) and all(p.device.type in _FUSED_DEVICES and p.is_floating_point() for p in params)
    return torch.optim.Adam(params, lr=lr, **({"fused": True} if fused else {"foreach": True}), **kwargs)
