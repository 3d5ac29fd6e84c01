"""Atari configs: ``<game>_<algo>_config.py`` (``-e pong -p dqn``, ``-e breakout -p ppo``, ...)."""
