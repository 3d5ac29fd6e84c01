"""CartPole-v1 (Gymnasium classic control), and ``cartpole_pomdp``: CartPole with the velocities hidden."""

from .envs import CartPolePOMDPEnv, HideVelocity

__all__ = ["CartPolePOMDPEnv", "HideVelocity"]
