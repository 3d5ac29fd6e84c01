"""``MiniGridEnv``: a MiniGrid env (``minigrid``, the ``[minigrid]`` extra) with the observation a
network eats, chosen by ``obs_type``:

- ``"flat"`` (default, for the MLP models): the agent's partial view (``agent_view_size`` cells
  square, 7 by default) as a one-hot of each cell's object (11 kinds), colour (6) and state (3,
  e.g. a door open / closed / locked), followed by a one-hot of the agent's direction (4): one
  float32 vector of ``view * view * 20 + 4`` values (984 for 7x7). The mission string is dropped
  (it is fixed in DoorKey and the empty rooms).
- ``"image"``: the same partial view as MiniGrid encodes it (object, colour, state indices per
  cell), channel-first uint8 ``(3, view, view)``; for a conv encoder.

Rewards, termination and the time limit (``truncated``) are MiniGrid's own. Videos
(``enable_save_replay``) show MiniGrid's full-grid ``rgb_array`` render.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ..config.view import setting
from ..utils.errors import ConfigError
from ..utils.extras import import_extra
from ..utils.registry import ENV_REGISTRY
from .gymnasium_env import GymnasiumConfig, GymnasiumEnv

N_OBJECTS, N_COLORS, N_STATES, N_DIRECTIONS = 11, 6, 3, 4  # minigrid.core.constants' tables
OBS_TYPES = ("flat", "image")


class MiniGridImage(gym.ObservationWrapper[npt.NDArray[np.uint8], object, Dict[str, object]]):
    """The partial view's encoding, channel-first uint8 ``(3, view, view)``."""

    def __init__(self, env: gym.Env[Dict[str, object], object]) -> None:
        super().__init__(env)
        view = _view_space(env)
        h, w, c = view.shape
        self.observation_space = gym.spaces.Box(0, 255, shape=(c, h, w), dtype=np.uint8)

    def observation(self, observation: Dict[str, object]) -> npt.NDArray[np.uint8]:
        return np.ascontiguousarray(np.asarray(observation["image"], dtype=np.uint8).transpose(2, 0, 1))


class MiniGridFlat(gym.ObservationWrapper[npt.NDArray[np.float32], object, Dict[str, object]]):
    """One-hot object / colour / state of each cell of the partial view, then the direction: float32."""

    def __init__(self, env: gym.Env[Dict[str, object], object]) -> None:
        super().__init__(env)
        h, w, _ = _view_space(env).shape
        self._cells = h * w
        size = self._cells * (N_OBJECTS + N_COLORS + N_STATES) + N_DIRECTIONS
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32)
        self._eye_obj = np.eye(N_OBJECTS, dtype=np.float32)
        self._eye_col = np.eye(N_COLORS, dtype=np.float32)
        self._eye_state = np.eye(N_STATES, dtype=np.float32)
        self._eye_dir = np.eye(N_DIRECTIONS, dtype=np.float32)

    def observation(self, observation: Dict[str, object]) -> npt.NDArray[np.float32]:
        image = np.asarray(observation["image"]).reshape(self._cells, 3)
        return np.concatenate([
            np.concatenate([self._eye_obj[image[:, 0]], self._eye_col[image[:, 1]], self._eye_state[image[:, 2]]],
                           axis=1).reshape(-1),
            self._eye_dir[int(np.asarray(observation["direction"]))],
        ])


def _view_space(env: gym.Env[Dict[str, object], object]) -> gym.spaces.Box:
    space = env.observation_space
    image = space.spaces.get("image") if isinstance(space, gym.spaces.Dict) else None
    if not isinstance(image, gym.spaces.Box) or len(image.shape) != 3:
        raise ConfigError(f"not a MiniGrid env (no 'image' observation): {env}")
    return image


@dataclass(frozen=True)
class MiniGridConfig(GymnasiumConfig):
    """``env`` of a :class:`MiniGridEnv`: :class:`GymnasiumEnv`'s keys and ``obs_type``."""

    #: (str) 'flat': one-hot object/colour/state of the partial view + direction, float32 (MLP);
    #: 'image': the partial view's encoding, channel-first uint8 (conv encoder).
    obs_type: str = setting("flat", OBS_TYPES)


@ENV_REGISTRY.register("minigrid")
class MiniGridEnv(GymnasiumEnv[Any, Any]):
    """A MiniGrid id (``env_id``, e.g. ``MiniGrid-DoorKey-5x5-v0``) with the ``obs_type`` observation
    (config keys: :class:`MiniGridConfig`)."""

    config_view = MiniGridConfig
    _typed: MiniGridConfig

    def __init__(self, env_or_id: Optional[str] = None, cfg: Optional[Mapping[str, object]] = None) -> None:
        super().__init__(env_or_id, cfg)
        obs_type = self._typed.obs_type
        if obs_type not in OBS_TYPES:  # (an env built directly: its config as given)
            raise ConfigError(f"MiniGrid obs_type must be one of {OBS_TYPES}, got {obs_type!r}")
        self._obs_type = obs_type

    def _create(self) -> gym.Env[Any, Any]:
        import_extra("minigrid", "minigrid", what="MiniGrid envs")  # registers the MiniGrid ids
        env = super()._create()
        return MiniGridFlat(env) if self._obs_type == "flat" else MiniGridImage(env)
