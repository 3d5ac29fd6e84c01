"""What the workers need of the objects they are handed: an env manager and a scalar writer.

Structural types (``typing.Protocol``): ``stride.envs``' managers satisfy ``EnvManager`` without
naming it, and so does a user's own manager with the same methods.
"""

from __future__ import annotations

from typing import Dict, Mapping, Optional, Protocol, runtime_checkable

import gymnasium as gym

from ..envs.base_env import BaseEnvTimestep


class ScalarWriter(Protocol):
    """Where scalars go (a TensorBoard ``SummaryWriter``)."""

    def add_scalar(self, tag: str, scalar_value: float, global_step: int) -> object:
        """Record one scalar at ``global_step``."""


class EnvManager(Protocol):
    """The env manager contract of ``shared/API.md`` as far as collectors and evaluators use it."""

    @property
    def env_num(self) -> int:
        """Number of envs."""

    @property
    def ready_obs(self) -> Dict[int, object]:
        """``{env_id: obs}`` of the envs waiting for an action."""

    @property
    def closed(self) -> bool:
        """Whether the envs are not launched (never, or closed since)."""

    @property
    def action_space(self) -> gym.spaces.Space[object]:
        """The envs' (common) action space."""

    def launch(self, reset_param: Optional[Dict[int, Dict[str, object]]] = None) -> None:
        """Start the envs and reset them."""

    def reset(self, reset_param: Optional[Dict[int, Dict[str, object]]] = None) -> None:
        """Reset every env (new episodes)."""

    def step(self, actions: Dict[int, object]) -> Dict[int, BaseEnvTimestep]:
        """Send actions; the timesteps that came back, by env id."""

    def close(self) -> None:
        """Close every env."""


@runtime_checkable
class Stateful(Protocol):
    """A component whose state a checkpoint can hold (plain values and tensors)."""

    def state_dict(self) -> Dict[str, object]:
        """The state, as plain values and tensors."""

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        """Restore a state :meth:`state_dict` gave."""
