"""Observation encoders."""

from __future__ import annotations

from typing import List, Optional, Sequence, Type, Union

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
    """Flattened vector observation -> features through an MLP (integer observations, e.g. board
    planes, are cast to float32 inside the model, so they stay compact in replay)."""

    def __init__(self, obs_shape: int | Sequence[int], hidden_size_list: Sequence[int], activation: str = "relu") -> None:
        super().__init__()
        in_size = obs_shape if isinstance(obs_shape, int) else int(torch.tensor(list(obs_shape)).prod())
        self.output_size = hidden_size_list[-1]
        self.net = MLP(in_size, hidden_size_list, activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_floating_point():
            x = x.float()
        out: torch.Tensor = self.net(x.flatten(1) if x.dim() > 2 else x)
        return out


def _conv_out_size(convs: nn.Module, obs_shape: Sequence[int]) -> int:
    """Flattened size of ``convs``' output on one ``obs_shape`` input (a dry run, no gradient)."""
    with torch.no_grad():
        return int(convs(torch.zeros(1, *obs_shape)).numel())


def _image_shape(obs_shape: int | Sequence[int], name: str) -> Sequence[int]:
    if isinstance(obs_shape, int) or len(obs_shape) != 3:
        raise ConfigError(f"the {name} encoder needs an image obs_shape (C, H, W), got {obs_shape!r}")
    return [int(s) for s in obs_shape]


class ConvEncoder(nn.Module):
    """Channel-first images ``(..., C, H, W)`` -> features: ``convs``, flatten, one Linear + ReLU.

    Any dtype is accepted and cast to float32 times ``scale`` inside the model, so observations stay
    uint8 from the env through the replay buffer to the learner (Atari's 1/255; MinAtar's 0/1 planes
    keep scale 1). Leading batch dims are flattened and restored."""

    def __init__(self, obs_shape: Sequence[int], convs: nn.Module, hidden_size: int, scale: float) -> None:
        super().__init__()
        self.obs_shape = tuple(obs_shape)
        self.scale = scale
        self.output_size = hidden_size
        self.convs = convs
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(_conv_out_size(convs, obs_shape), hidden_size), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-3]
        x = x.reshape(-1, *x.shape[-3:]).float() * self.scale
        out: torch.Tensor = self.fc(self.convs(x))
        return out.reshape(*lead, self.output_size)


class NatureCNN(ConvEncoder):
    """The DQN Nature CNN (Mnih et al. 2015): conv 32 8x8 s4, 64 4x4 s2, 64 3x3 s1, FC 512, ReLU;
    input scaled by 1/255. Needs H, W >= 36 (Atari: ``(4, 84, 84)``)."""

    def __init__(self, obs_shape: int | Sequence[int], hidden_size: int = 512) -> None:
        shape = _image_shape(obs_shape, "nature")
        if min(shape[1:]) < NATURE_MIN_SIZE:
            raise ConfigError(f"the nature encoder needs images of at least {NATURE_MIN_SIZE}x{NATURE_MIN_SIZE}, "
                              f"got obs_shape {list(shape)}; use encoder='minatar' for small grids")
        convs = nn.Sequential(nn.Conv2d(shape[0], 32, 8, stride=4), nn.ReLU(), nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
                              nn.Conv2d(64, 64, 3, stride=1), nn.ReLU())
        super().__init__(shape, convs, hidden_size, scale=1.0 / 255.0)


class MinAtarEncoder(ConvEncoder):
    """The MinAtar encoder (Young & Tian 2019): conv 16 3x3 s1, FC 128, ReLU; 0/1 planes unscaled."""

    def __init__(self, obs_shape: int | Sequence[int], hidden_size: int = 128) -> None:
        shape = _image_shape(obs_shape, "minatar")
        super().__init__(shape, nn.Sequential(nn.Conv2d(shape[0], 16, 3, stride=1), nn.ReLU()), hidden_size, scale=1.0)


class _ChannelsFirst(nn.Module):
    """``(N, H, W, C)`` -> ``(N, C, H, W)``: lets a conv stack read channel-last planes."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(0, 3, 1, 2)


class BoardEncoder(ConvEncoder):
    """Board-game planes, channel-last ``(H, W, C)`` as PettingZoo's classic games give them (connect
    four ``(6, 7, 2)``, tic-tac-toe ``(3, 3, 2)``): conv 64 kxk s1 (k = min(4, H, W), no padding), FC
    256, ReLU; 0/1 planes unscaled.

    Why: a k x k window holds every line of four -- row, column and both diagonals -- so each filter
    is a line detector shared across the board, where an MLP must learn each threat at every cell
    it can occur (connect four has 69 lines of four). At the MLP's cost: 64 x 4 x 4 x 2 conv weights
    plus a 768 -> 256 FC on (6, 7, 2), against 84 -> 256 -> 256 -> 256. Unlike the MinAtar encoder it
    reads the planes as PettingZoo gives them, so the replay keeps the env's arrays untouched."""

    def __init__(self, obs_shape: int | Sequence[int], hidden_size: int = 256, channels: int = 64) -> None:
        if isinstance(obs_shape, int) or len(obs_shape) != 3:
            raise ConfigError(f"the board encoder needs channel-last planes obs_shape (H, W, C), got {obs_shape!r}")
        h, w, c = (int(s) for s in obs_shape)
        k = min(4, h, w)
        convs = nn.Sequential(_ChannelsFirst(), nn.Conv2d(c, channels, k, stride=1), nn.ReLU())
        super().__init__([h, w, c], convs, hidden_size, scale=1.0)


#: smallest H and W the Nature CNN takes (8x8 s4 -> 4x4 s2 -> 3x3 s1 leaves 1x1)
NATURE_MIN_SIZE = 36
#: the ``encoder`` choices of the model templates (None: picked from ``obs_shape``)
ENCODERS = ("nature", "minatar", "board", "mlp")


def pick_encoder(obs_shape: int | Sequence[int]) -> str:
    """``'mlp'`` for a vector ``obs_shape``; for a channel-first image ``(C, H, W)``, ``'nature'``
    when H, W >= 36 (Atari's ``(4, 84, 84)``), else ``'minatar'`` (small grids like ``(4, 10, 10)``)."""
    if isinstance(obs_shape, int) or len(obs_shape) != 3:
        return "mlp"
    return "nature" if min(int(s) for s in obs_shape[1:]) >= NATURE_MIN_SIZE else "minatar"


def build_encoder(obs_shape: int | Sequence[int], encoder: Optional[str], hidden_size_list: Sequence[int],
                  activation: str) -> Union[FCEncoder, ConvEncoder]:
    """The encoder named ``encoder`` (None: :func:`pick_encoder`); ``hidden_size_list`` and
    ``activation`` shape the MLP only (the conv encoders keep their published sizes and ReLU)."""
    name = pick_encoder(obs_shape) if encoder is None else encoder
    if name == "mlp":
        return FCEncoder(obs_shape, list(hidden_size_list), activation)
    if name == "nature":
        return NatureCNN(obs_shape)
    if name == "minatar":
        return MinAtarEncoder(obs_shape)
    if name == "board":
        return BoardEncoder(obs_shape)
    raise ConfigError(f"unknown encoder '{name}'; valid choices: {', '.join(ENCODERS)}")
