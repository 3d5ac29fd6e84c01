"""Q-learning models."""

from __future__ import annotations

from typing import Dict, Optional, Sequence

import torch
from torch import nn

from ...utils.registry import MODEL_REGISTRY
from ..common import ENCODERS, DiscreteHead, DuelingHead, MaybeMasked, build_encoder, split_mask
from ...utils.errors import ConfigError


@MODEL_REGISTRY.register("dqn")
class DQN(nn.Module):
    """Encoder + (dueling) Q head; ``forward(obs) -> {'logit': Q values}``.

    ``encoder``: ``'mlp'`` (``encoder_hidden_size_list``), ``'nature'`` (Nature CNN), ``'minatar'`` or
    ``'board'`` (channel-last board-game planes, PettingZoo's; never picked by default);
    None picks from ``obs_shape`` (a vector: MLP; a ``(C, H, W)`` image: Nature CNN from 36x36 up,
    else the MinAtar one). Image observations may stay uint8: the conv encoders scale them.
    A ``{'observation', 'action_mask'}`` observation (PettingZoo's) gives ``{'logit', 'action_mask'}``:
    the sampling wrappers and the TD target then use legal actions only (``common/masked_obs.py``)."""

    #: valid values of the keyword arguments (checked by ``compile_config``)
    VALID = dict(encoder_hidden_size_list="[1, inf)", head_layer_num="[0, inf)", encoder=ENCODERS)

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int,
        encoder_hidden_size_list: Sequence[int] = (128, 128, 64),
        dueling: bool = True,
        head_layer_num: int = 1,
        activation: str = "relu",
        encoder: Optional[str] = None,
    ) -> None:
        super().__init__()
        if not isinstance(action_shape, int) or action_shape < 1:
            raise ConfigError(f"DQN needs a positive int action_shape, got {action_shape!r}")
        self.encoder = build_encoder(obs_shape, encoder, encoder_hidden_size_list, activation)
        head = DuelingHead if dueling else DiscreteHead
        self.head = head(self.encoder.output_size, action_shape, head_layer_num, activation)

    def forward(self, obs: MaybeMasked) -> Dict[str, torch.Tensor]:
        x, mask = split_mask(obs)
        out = {"logit": self.head(self.encoder(x))}
        if mask is not None:
            out["action_mask"] = mask
        return out
