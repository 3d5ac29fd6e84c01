"""Gymnasium env ids as ``gymnasium.make`` reads them: ``[module:][namespace/]name[-vN]``.

``gymnasium.make("my_pkg:MyEnv-v0")`` imports ``my_pkg`` (which registers ``MyEnv-v0``) before it
looks the id up; ``gymnasium.spec`` does not, and calls the same id unknown. Every Stride path that
needs an id's spec (making the env, describing a dataset) calls :func:`env_spec`, so an id that
Gymnasium's own ``make`` accepts works in a config too.
"""

from __future__ import annotations

import importlib

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec

from .errors import ConfigError


def env_spec(env_id: str) -> EnvSpec:
    """The registered spec of ``env_id``, its ``module:`` prefix (if any) imported first.

    Raises ``gymnasium.error.Error`` for an id Gymnasium does not know (as ``gymnasium.spec``), and a
    one-line :class:`ConfigError` naming the module when the prefix cannot be imported."""
    module, sep, name = env_id.partition(":")
    if not sep:
        return gym.spec(env_id)
    if not module or not name:
        raise ConfigError(f"env id {env_id!r}: expected 'module:EnvName-vN' (a module that registers the env "
                          "on import, then the id), or an id alone")
    try:
        importlib.import_module(module)
    except ImportError as e:
        raise ConfigError(f"env id {env_id!r}: cannot import {module!r}, the module before ':' that should "
                          f"register {name!r} ({e})") from None
    return gym.spec(name)
