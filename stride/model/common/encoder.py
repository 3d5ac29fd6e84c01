"""Observation encoders."""

from __future__ import annotations

from typing import List, Sequence, Type

import torch
from torch import nn
from ...utils.errors import ConfigError

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU, "silu": nn.SiLU, "elu": nn.ELU}


def get_activation(name: str) -> Type[nn.Module]:
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ConfigError(f"unknown activation '{name}'; valid choices: {', '.join(sorted(ACTIVATIONS))}") from None


def MLP(in_size: int, hidden_sizes: Sequence[int], activation: str = "relu", last_activation: bool = True) -> nn.Sequential:
    """Linear layers of the given sizes with ``activation`` between them."""
    layers: List[nn.Module] = []
    act = get_activation(activation)
    sizes = [in_size, *hidden_sizes]
    for i in range(len(hidden_sizes)):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if last_activation or i < len(hidden_sizes) - 1:
            layers.append(act())
    return nn.Sequential(*layers)


class FCEncoder(nn.Module):
    """Flattened vector observation -> features through an MLP."""

    def __init__(self, obs_shape: int | Sequence[int], hidden_size_list: Sequence[int], activation: str = "relu") -> None:
        super().__init__()
        in_size = obs_shape if isinstance(obs_shape, int) else int(torch.tensor(list(obs_shape)).prod())
        self.output_size = hidden_size_list[-1]
        self.net = MLP(in_size, hidden_size_list, activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.net(x.flatten(1) if x.dim() > 2 else x)
        return out
