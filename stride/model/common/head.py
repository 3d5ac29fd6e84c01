"""Output heads."""

from __future__ import annotations

import torch
from torch import nn

from .encoder import MLP


class DiscreteHead(nn.Module):
    """Features -> one value per action (``layer_num`` hidden layers first)."""

    def __init__(self, hidden_size: int, action_size: int, layer_num: int = 1, activation: str = "relu") -> None:
        super().__init__()
        self.body = MLP(hidden_size, [hidden_size] * layer_num, activation)
        self.out = nn.Linear(hidden_size, action_size)
        self._no_body = layer_num == 0  # skip calling an empty Sequential (a module call per forward)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.out(x if self._no_body else self.body(x))
        return out


class DuelingHead(nn.Module):
    """Q = V + A - mean(A) (Wang et al., 2016)."""

    def __init__(self, hidden_size: int, action_size: int, layer_num: int = 1, activation: str = "relu") -> None:
        super().__init__()
        self.adv = nn.Sequential(MLP(hidden_size, [hidden_size] * layer_num, activation), nn.Linear(hidden_size, action_size))
        self.value = nn.Sequential(MLP(hidden_size, [hidden_size] * layer_num, activation), nn.Linear(hidden_size, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a: torch.Tensor = self.adv(x)
        v: torch.Tensor = self.value(x)
        return v + a - a.mean(dim=-1, keepdim=True)
