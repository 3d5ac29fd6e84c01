"""CartPole with its velocities hidden (env type ``'cartpole_pomdp'``, ``-e cartpole_pomdp``): a POMDP.

The observation keeps the cart position and the pole angle, ``[x, theta]``; the cart velocity and
the pole's angular velocity (indices 1 and 3) are dropped, as sb3-contrib / rl-zoo's
``CartPoleNoVel-v1`` masks them. A memoryless policy sees one frame and cannot tell which way the
pole is falling: a recurrent policy (R2D2) has to infer the velocities from the history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, cast

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ...envs.gymnasium_env import GymnasiumConfig, GymnasiumEnv
from ...utils.registry import ENV_REGISTRY

#: observation indices kept: cart position and pole angle
KEPT = (0, 2)

Obs = npt.NDArray[np.float32]


class HideVelocity(gym.ObservationWrapper[Obs, np.int64, Obs]):
    """Keeps ``obs[[0, 2]]`` (``[x, theta]``) of a CartPole observation."""

    def __init__(self, env: gym.Env[Obs, np.int64]) -> None:
        super().__init__(env)
        box = env.observation_space
        if not (isinstance(box, gym.spaces.Box) and box.shape == (4,)):
            raise ValueError(f"HideVelocity needs CartPole's Box(4,) observation, got {box!r}")
        idx = list(KEPT)
        self.observation_space = gym.spaces.Box(box.low[idx], box.high[idx], dtype=np.float32)

    def observation(self, observation: Obs) -> Obs:
        return np.asarray(observation, dtype=np.float32)[list(KEPT)]


@dataclass(frozen=True)
class CartPolePOMDPConfig(GymnasiumConfig):
    """``env`` of a :class:`CartPolePOMDPEnv`: :class:`GymnasiumEnv`'s keys, CartPole by default."""

    #: (str) the CartPole Gymnasium id whose velocities are hidden.
    env_id: Optional[str] = "CartPole-v1"


@ENV_REGISTRY.register("cartpole_pomdp")
class CartPolePOMDPEnv(GymnasiumEnv[Obs, np.int64]):
    """Gymnasium's CartPole (``env_id``, default ``'CartPole-v1'``) behind :class:`HideVelocity`."""

    config_view = CartPolePOMDPConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None) -> None:
        cfg = dict(cfg or {})
        env_id = cfg.get("env_id") or "CartPole-v1"
        kwargs: Dict[str, Any] = dict(cast(Mapping[str, Any], cfg.get("make_kwargs") or {}))  # gymnasium.make's **kwargs: Any
        if cfg.get("max_episode_steps") is not None:
            kwargs["max_episode_steps"] = cfg["max_episode_steps"]
        super().__init__(HideVelocity(gym.make(str(env_id), **kwargs)), cfg)
