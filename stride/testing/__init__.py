"""Helpers for testing Stride and code built on it: fake environments that misbehave on demand."""

from .fake_envs import BurnGymEnv, FakeEnv, FakeEnvError, ImageGymEnv, fake_dict_space, make_fake_env, make_gym_env

__all__ = ["FakeEnv", "FakeEnvError", "ImageGymEnv", "BurnGymEnv", "fake_dict_space", "make_fake_env", "make_gym_env"]
