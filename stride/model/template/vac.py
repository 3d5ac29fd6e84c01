"""Value actor-critic (``VAC``): the model of PPO and A2C.

One network with an actor head and a critic head over a shared encoder, or two separate encoders
(``share_encoder=False``, usually better for continuous control). The actor head gives logits for a
discrete action space, or a diagonal Gaussian ``{'mu', 'sigma'}`` for a continuous one with a
state-independent learnt log-sigma. Layers get orthogonal init (gain sqrt(2) in hidden layers,
0.01 on the actor's output so the first policy is near-uniform, 1 on the critic's), zero biases --
the "implementation details" of Engstrom et al. (2020) and Huang et al. (2022).
"""

from __future__ import annotations

import math
from typing import Dict, Optional, Sequence, Union

import torch
from torch import nn

from ...utils.registry import MODEL_REGISTRY
from ..common import ENCODERS, MaybeMasked, build_encoder, split_mask
from ..common.encoder import MLP

MODES = ("compute_actor", "compute_critic", "compute_actor_critic")

#: an output entry: a tensor (logits, values), or a Gaussian's ``{'mu', 'sigma'}`` (continuous actions)
ActorOutput = Union[torch.Tensor, Dict[str, torch.Tensor]]


def _orthogonal_init(module: nn.Module, gain: float) -> None:
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.orthogonal_(m.weight, gain)
            if m.bias is not None:
                nn.init.zeros_(m.bias)


@MODEL_REGISTRY.register("vac")
class VAC(nn.Module):
    """Actor-critic: ``forward(obs, mode)`` with ``mode`` one of ``compute_actor`` (-> ``{'logit'}``),
    ``compute_critic`` (-> ``{'value'}``, shape ``(B,)``, or ``(B, K)`` with ``critic_head_num=K > 1``) or ``compute_actor_critic`` (both).

    ``encoder``: ``'mlp'`` (``encoder_hidden_size_list``, ``activation``), ``'nature'`` or
    ``'minatar'`` (conv, ReLU); None picks from ``obs_shape`` as the DQN model does.

    ``critic_head_num`` > 1 gives that many value outputs from one critic head (``value`` of shape
    ``(B, K)``): PPO + RND learns the extrinsic (column 0) and intrinsic (column 1) returns apart.

    ``logit`` is a ``(B, A)`` tensor for ``action_space='discrete'`` and ``{'mu', 'sigma'}`` (each
    ``(B, A)``) for ``'continuous'``; ``mu`` is not squashed, the policy clips actions to the space.
    """

    #: valid values of the keyword arguments (checked by ``compile_config``)
    VALID = dict(action_space=("discrete", "continuous"), encoder_hidden_size_list="[1, inf)",
                 actor_head_hidden_size="[1, inf)", actor_head_layer_num="[0, inf)",
                 critic_head_hidden_size="[1, inf)", critic_head_layer_num="[0, inf)", critic_head_num="[1, inf)", sigma_init="(0, inf)",
                 encoder=ENCODERS)

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        action_space: str = "discrete",
        share_encoder: bool = True,
        encoder_hidden_size_list: Sequence[int] = (64, 64),
        actor_head_hidden_size: int = 64,
        actor_head_layer_num: int = 1,
        critic_head_hidden_size: int = 64,
        critic_head_layer_num: int = 1,
        critic_head_num: int = 1,
        activation: str = "tanh",
        sigma_init: float = 0.6,
        encoder: Optional[str] = None,
    ) -> None:
        super().__init__()
        if action_space not in ("discrete", "continuous"):
            raise ValueError(f"unknown action_space '{action_space}'; valid choices: continuous, discrete")
        action_size = action_shape if isinstance(action_shape, int) else int(math.prod(action_shape))
        if action_size < 1:
            raise ValueError(f"VAC needs a positive action_shape, got {action_shape!r}")
        self.action_space = action_space
        self.share_encoder = share_encoder
        self.critic_head_num = int(critic_head_num)
        hidden = list(encoder_hidden_size_list)
        self.actor_encoder = build_encoder(obs_shape, encoder, hidden, activation)
        self.critic_encoder = self.actor_encoder if share_encoder else build_encoder(obs_shape, encoder, hidden, activation)
        size = self.actor_encoder.output_size
        self.actor_head = nn.Sequential(MLP(size, [actor_head_hidden_size] * actor_head_layer_num, activation),
                                        nn.Linear(actor_head_hidden_size if actor_head_layer_num else size, action_size))
        self.critic_head = nn.Sequential(MLP(size, [critic_head_hidden_size] * critic_head_layer_num, activation),
                                         nn.Linear(critic_head_hidden_size if critic_head_layer_num else size, self.critic_head_num))
        if action_space == "continuous":
            self.log_sigma = nn.Parameter(torch.full((action_size,), math.log(sigma_init)))
        _orthogonal_init(self, math.sqrt(2))
        _orthogonal_init(self.actor_head[-1], 0.01)
        _orthogonal_init(self.critic_head[-1], 1.0)

    def forward(self, obs: MaybeMasked, mode: str = "compute_actor_critic") -> Dict[str, ActorOutput]:
        """``logit`` (discrete: logits; continuous: ``{'mu', 'sigma'}``) and/or ``value``, by ``mode``.
        A ``{'observation', 'action_mask'}`` observation gets its illegal actions' logits set to -1e8
        (Huang & Ontanon 2022, invalid action masking): sampling, log-probs, ratios and entropy then
        cover legal actions only, with finite numbers (-inf would make the entropy NaN)."""
        x_obs, mask = split_mask(obs)
        if mode == "compute_actor":
            return {"logit": self._masked(self._actor(self.actor_encoder(x_obs)), mask)}
        if mode == "compute_critic":
            return {"value": self._critic(self.critic_encoder(x_obs))}
        if mode == "compute_actor_critic":
            x = self.actor_encoder(x_obs)
            critic_x = x if self.share_encoder else self.critic_encoder(x_obs)
            return {"logit": self._masked(self._actor(x), mask), "value": self._critic(critic_x)}
        raise ValueError(f"unknown VAC mode '{mode}'; valid choices: {', '.join(MODES)}")

    @staticmethod
    def _masked(logit: ActorOutput, mask: Optional[torch.Tensor]) -> ActorOutput:
        if mask is None or not isinstance(logit, torch.Tensor):
            return logit
        return logit.masked_fill(~mask, -1e8)

    def _critic(self, x: torch.Tensor) -> torch.Tensor:
        value: torch.Tensor = self.critic_head(x)
        return value.squeeze(-1) if self.critic_head_num == 1 else value

    def _actor(self, x: torch.Tensor) -> ActorOutput:
        out: torch.Tensor = self.actor_head(x)
        if self.action_space == "discrete":
            return out
        sigma = self.log_sigma.clamp(-20.0, 2.0).exp().expand_as(out)
        return {"mu": out, "sigma": sigma}
