"""Gymnasium-Robotics' Fetch tasks (env type ``'fetch'``, ``-e fetchreach``): SAC + HER
(``fetchreach_sac_her``) and DDPG + HER (``fetchreach_ddpg_her``) configs in ``config/``.

Needs the ``robotics`` extra (``pip install -c constraints.txt -e ".[robotics]"``)."""

from .envs import FetchEnv, register_fetch

__all__ = ["FetchEnv", "register_fetch"]
