"""Atari 2600 games (ale-py, ``ALE/<Game>-v5``) with the standard DQN preprocessing preset.

Needs the Atari extra: ``pip install -c constraints.txt -e ".[atari]"``. The preset is :func:`make_atari_env`;
:class:`AtariEnv` (env type ``'atari'``) is it as a Stride env;
:func:`make_atari_vector_env` is it in ale-py's C++ vector env, which the ``'vector'`` env manager
runs (``--set env.manager.type=vector``). The configs (``-e pong``,
``-e breakout``, ``-e spaceinvaders``) are in ``config/``.
"""

from .envs import AtariEnv, ClipRewardKeepScore, EpisodicLife, FireReset, ReseedWithoutReload, make_atari_env
from .vector_env import AtariVectorPreset, make_atari_vector_env

__all__ = ["AtariEnv", "ClipRewardKeepScore", "EpisodicLife", "FireReset", "ReseedWithoutReload", "make_atari_env",
           "AtariVectorPreset", "make_atari_vector_env"]
