"""Q-actor-critic model for continuous control: DDPG, TD3 (deterministic actor) and SAC (Gaussian).

``QAC(obs_shape, action_shape, action_space='regression'|'reparameterization', twin_critic=False)``.
``forward(obs, mode='compute_actor')`` gives ``{'action'}`` (a tanh-bounded deterministic action in
[-1, 1]) or ``{'mu', 'sigma'}`` (an unsquashed Gaussian; the ``reparam_sample`` wrapper samples and
squashes it); ``forward({'obs', 'action'}, mode='compute_critic')`` gives ``{'q_value'}`` of shape
``(B,)``, or ``(2, B)`` with twin critics. The actor and the critic are separate submodules
(``model.actor`` / ``model.critic``) with no shared layers, so each gets its own optimizer and a
target network can cover just the critic.

An observation may be a tensor or a goal dict (``{'observation', 'achieved_goal', 'desired_goal'}``,
Gymnasium-Robotics'): actor and critic read it through ``common.goal_input``, the one path DQN's
goal dicts take too, so SAC / DDPG / TD3 + HER need no flattening wrapper (``obs_shape`` is then
``observation`` + ``desired_goal`` sizes).
"""

from __future__ import annotations

import math
from typing import Dict, Mapping, Sequence, cast

import torch
from torch import nn

from ...utils.registry import MODEL_REGISTRY
from ..common.encoder import MLP
from ..common.masked_obs import MaybeMasked, goal_input


def _size(shape: int | Sequence[int]) -> int:
    return int(shape) if isinstance(shape, int) else int(math.prod(shape))


class ContinuousActor(nn.Module):
    """obs -> tanh action (``regression``) or Gaussian ``mu``/``sigma`` (``reparameterization``)."""

    def __init__(self, obs_size: int, action_size: int, action_space: str, hidden_size_list: Sequence[int],
                 activation: str, log_sigma_range: Sequence[float]) -> None:
        super().__init__()
        self.action_space = action_space
        self.body = MLP(obs_size, list(hidden_size_list), activation)
        out = action_size if action_space == "regression" else 2 * action_size
        self.head = nn.Linear(hidden_size_list[-1], out)
        self.log_sigma_min, self.log_sigma_max = float(log_sigma_range[0]), float(log_sigma_range[1])

    def forward(self, obs: MaybeMasked) -> Dict[str, torch.Tensor]:
        obs = goal_input(obs)
        x = self.head(self.body(obs.flatten(1) if obs.dim() > 2 else obs))
        if self.action_space == "regression":
            return {"action": torch.tanh(x)}
        mu, log_sigma = x.chunk(2, dim=-1)
        log_sigma = log_sigma.clamp(self.log_sigma_min, self.log_sigma_max)
        return {"mu": mu, "sigma": log_sigma.exp()}


class ContinuousCritic(nn.Module):
    """(obs, action) -> Q, with one or two independent networks (``q_value`` (B,) or (2, B))."""

    def __init__(self, obs_size: int, action_size: int, hidden_size_list: Sequence[int], activation: str,
                 twin: bool) -> None:
        super().__init__()
        self.twin = twin
        self.nets = nn.ModuleList(
            nn.Sequential(MLP(obs_size + action_size, list(hidden_size_list), activation),
                          nn.Linear(hidden_size_list[-1], 1))
            for _ in range(2 if twin else 1)
        )

    def forward(self, obs: MaybeMasked, action: torch.Tensor) -> torch.Tensor:
        obs = goal_input(obs)
        x = torch.cat([obs.flatten(1) if obs.dim() > 2 else obs, action.reshape(action.shape[0], -1).float()], dim=-1)
        qs = [net(x).squeeze(-1) for net in self.nets]
        return torch.stack(qs) if self.twin else qs[0]


@MODEL_REGISTRY.register("qac")
class QAC(nn.Module):
    """Actor + (twin) critic; see the module docstring for the two modes."""

    modes = ("compute_actor", "compute_critic")
    #: valid values of the keyword arguments (checked by ``compile_config``)
    VALID = dict(action_space=("regression", "reparameterization"), actor_hidden_size_list="[1, inf)",
                 critic_hidden_size_list="[1, inf)")

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        action_space: str = "regression",
        twin_critic: bool = False,
        actor_hidden_size_list: Sequence[int] = (256, 256),
        critic_hidden_size_list: Sequence[int] = (256, 256),
        activation: str = "relu",
        log_sigma_range: Sequence[float] = (-20.0, 2.0),
    ) -> None:
        super().__init__()
        if action_space not in ("regression", "reparameterization"):
            raise ValueError(f"unknown QAC action_space '{action_space}'; "
                             "valid choices: regression, reparameterization")
        obs_size, action_size = _size(obs_shape), _size(action_shape)
        if action_size < 1 or obs_size < 1:
            raise ValueError(f"QAC needs positive obs_shape/action_shape, got {obs_shape!r}/{action_shape!r}")
        self.action_space = action_space
        self.action_size = action_size
        self.actor = ContinuousActor(obs_size, action_size, action_space, actor_hidden_size_list, activation,
                                     log_sigma_range)
        self.critic = ContinuousCritic(obs_size, action_size, critic_hidden_size_list, activation, twin_critic)

    def forward(self, inputs: MaybeMasked | Dict[str, MaybeMasked], mode: str = "compute_actor") -> Dict[str, torch.Tensor]:
        """``compute_actor`` on an observation batch (a tensor or a goal dict), or ``compute_critic``
        on ``{'obs', 'action'}``."""
        if mode == "compute_actor":
            if isinstance(inputs, dict) and "action" in inputs:
                raise TypeError("QAC compute_actor takes an observation tensor or a goal dict, got a dict with "
                                "'action' (compute_critic's input)")
            return self.compute_actor(cast(MaybeMasked, inputs))  # a goal dict's keys: checked by goal_input
        if mode == "compute_critic":
            if not isinstance(inputs, dict):
                raise TypeError(f"QAC compute_critic takes a dict with obs and action, got {type(inputs).__name__}")
            return self.compute_critic(inputs)
        raise ValueError(f"unknown QAC mode '{mode}'; valid choices: {', '.join(self.modes)}")

    def compute_actor(self, obs: MaybeMasked) -> Dict[str, torch.Tensor]:
        """The actor's output: ``mu`` and ``sigma`` (stochastic) or ``action`` (deterministic)."""
        out: Dict[str, torch.Tensor] = self.actor(obs)
        return out

    def compute_critic(self, inputs: Mapping[str, MaybeMasked]) -> Dict[str, torch.Tensor]:
        """``q_value`` of ``inputs['action']`` at ``inputs['obs']`` (twin critics: stacked on dim 0)."""
        action = inputs["action"]
        if not isinstance(action, torch.Tensor):
            raise TypeError(f"QAC compute_critic takes an action tensor, got {type(action).__name__}")
        return {"q_value": self.critic(inputs["obs"], action)}
