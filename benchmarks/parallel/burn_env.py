"""Gymnasium id of the env that burns 1 ms of CPU per step (``stride.testing.fake_envs.BurnGymEnv``,
the env of ``benchmarks/env_managers``'s ``burn`` case, registered here, not copied), so a Stride config can name it:
``env_id="StrideBurn1ms-v0"`` (``site/sitecustomize.py`` imports this module in every process of case 1).
4 float32 observations and 2 actions, as CartPole-v1: the CartPole configs run on it unchanged.
Episodes of 50 steps keep the pipeline's one-episode evaluations short (50 ms)."""

import gymnasium as gym

ENV_ID = "StrideBurn1ms-v0"
MAX_LEN = 50

if ENV_ID not in gym.registry:
    gym.register(ENV_ID, entry_point="stride.testing.fake_envs:BurnGymEnv", kwargs={"cpu_ms": 1.0, "max_len": MAX_LEN})
