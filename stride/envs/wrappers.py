"""Gymnasium wrappers the env families share."""

from __future__ import annotations

from typing import TypeVar

import gymnasium as gym
import numpy as np
import numpy.typing as npt


#: the wrapped env's action type (ChannelFirst leaves actions as they are)
ActT = TypeVar("ActT")
#: an image observation, any element type
Image = npt.NDArray[np.generic]


class ChannelFirst(gym.ObservationWrapper[Image, ActT, Image]):
    """Image observations ``(H, W, C)`` -> channel-first ``(C, H, W)``, what the conv encoders take.

    Bool planes (MinAtar) become uint8 0/1; uint8 stays uint8 (Atari, RGB), so observations stay
    one byte per value through shared memory and replay. The array is contiguous (one copy)."""

    def __init__(self, env: gym.Env[Image, ActT]) -> None:
        super().__init__(env)
        space = env.observation_space
        if not (isinstance(space, gym.spaces.Box) and len(space.shape) == 3):
            raise ValueError(f"ChannelFirst needs a (H, W, C) Box observation space, got {space}")
        self._dtype = np.dtype(np.uint8) if space.dtype == np.bool_ else np.dtype(space.dtype)
        low = np.transpose(space.low, (2, 0, 1)).astype(self._dtype)
        high = np.transpose(space.high, (2, 0, 1)).astype(self._dtype)
        self.observation_space = gym.spaces.Box(low, high, dtype=self._dtype.type)

    def observation(self, observation: Image) -> Image:
        return np.ascontiguousarray(np.transpose(observation, (2, 0, 1)), dtype=self._dtype)
