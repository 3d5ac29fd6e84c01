"""``MinAtarEnv``: MinAtar games (Young & Tian 2019) with channel-first uint8 observations.

``minatar`` is an optional extra (``pip install -c constraints.txt -e ".[minatar]"``); it is imported, and its
Gymnasium ids (``MinAtar/Breakout-v1``, ``MinAtar/SpaceInvaders-v1``, ...) registered, when the
first env is made, in whichever process makes it (the subprocess env managers' workers too).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Optional

import gymnasium as gym

from ..utils.extras import import_extra
from ..utils.registry import ENV_REGISTRY
from .gymnasium_env import GymnasiumConfig, GymnasiumEnv
from .wrappers import ChannelFirst


def register_minatar() -> None:
    """Import ``minatar`` (or fail with the extra to install) and register its Gymnasium ids."""
    if "MinAtar/Breakout-v1" in gym.registry:
        return
    # minatar logs root warnings on import when seaborn/matplotlib (rendering only) are absent; a
    # NullHandler for that moment also keeps logging.warning from configuring the root logger
    root, quiet = logging.getLogger(), logging.NullHandler()
    level = root.level
    root.addHandler(quiet)
    root.setLevel(logging.ERROR)
    try:
        import_extra("minatar", "minatar", what="MinAtar envs")
        gym_module = import_extra("minatar.gym", "minatar", what="MinAtar envs")
    finally:
        root.setLevel(level)
        root.removeHandler(quiet)
    gym_module.register_envs()


@dataclass(frozen=True)
class MinAtarConfig(GymnasiumConfig):
    """``env`` of a :class:`MinAtarEnv`: :class:`GymnasiumEnv`'s keys, a MinAtar game by default."""

    #: (str) the MinAtar game's Gymnasium id ('MinAtar/<Game>-v1').
    env_id: Optional[str] = "MinAtar/Breakout-v1"


@ENV_REGISTRY.register("minatar")
class MinAtarEnv(GymnasiumEnv[Any, Any]):
    """A MinAtar Gymnasium id (``env_id``, e.g. ``'MinAtar/Breakout-v1'``) as a Stride env: the
    ``(10, 10, C)`` bool planes come as ``(C, 10, 10)`` uint8 0/1 (:class:`ChannelFirst`), the shape
    the ``'minatar'`` conv encoder is picked from. Config keys are :class:`GymnasiumEnv`'s."""

    config_view = MinAtarConfig

    def _create(self) -> gym.Env[Any, Any]:
        register_minatar()
        return ChannelFirst(super()._create())
