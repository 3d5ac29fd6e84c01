"""A tiny PettingZoo parallel env whose agents leave at different steps, for the PettingZooEnv and
MultiAgentManager tests (importable by the subprocess managers' workers)."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec


class Relay(ParallelEnv):
    """Agents ``a0``, ``a1``, ``a2``; ``a0`` terminates after 2 steps, ``a1`` after 3, ``a2`` is
    truncated after 5. Observation ``[t, k, seed]`` (step, agent index, episode seed), reward
    ``1 + action`` per agent per step."""

    metadata = {"name": "relay_v0"}

    def __init__(self) -> None:
        self.possible_agents = ["a0", "a1", "a2"]
        self.render_mode = None
        self.agents: list = []
        self._t = 0
        self._seed = 0

    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent: str) -> gym.spaces.Box:
        return gym.spaces.Box(-np.inf, np.inf, shape=(3,), dtype=np.float32)

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent: str) -> gym.spaces.Discrete:
        return gym.spaces.Discrete(2)

    def _obs(self, agent: str) -> np.ndarray:
        return np.array([self._t, self.possible_agents.index(agent), self._seed], dtype=np.float32)

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self._t = 0
        self._seed = -1 if seed is None else int(seed) % 1000
        return {a: self._obs(a) for a in self.agents}, {a: {} for a in self.agents}

    def step(self, actions):
        self._t += 1
        obs = {a: self._obs(a) for a in self.agents}
        rew = {a: 1.0 + float(actions[a]) for a in self.agents}
        term = {a: (a == "a0" and self._t >= 2) or (a == "a1" and self._t >= 3) for a in self.agents}
        trunc = {a: a == "a2" and self._t >= 5 for a in self.agents}
        self.agents = [a for a in self.agents if not (term[a] or trunc[a])]
        return obs, rew, term, trunc, {a: {} for a in obs}


def make_relay() -> Relay:
    return Relay()


def make_relay_aec():
    return parallel_to_aec(Relay())


def make_tictactoe():
    from pettingzoo.classic import tictactoe_v3

    return tictactoe_v3.env()
