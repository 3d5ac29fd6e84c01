"""``AgentDict``: the observation space of a multi-agent env, one sub-space per agent.

A value holds the agents that act now -- any subset of the space's keys (an AEC game shows only
the agent whose turn it is; agents that left a parallel env are gone). ``gymnasium.spaces.Dict``
requires every key, so this subclass is how the env managers' shared memory (``shm.py``: one slot
per agent plus a presence flag) and step checks (``checks.py``: one check per agent, a reward per
agent) know that a key may be missing. Everything else (sampling, seeding, ``spaces``) is
``gymnasium.spaces.Dict``'s.
"""

from __future__ import annotations

import gymnasium as gym


class AgentDict(gym.spaces.Dict):
    """``{agent: sub-space}``; a value is a dict over any subset of the agents."""

    def contains(self, x: object) -> bool:
        return isinstance(x, dict) and all(k in self.spaces and self.spaces[k].contains(v) for k, v in x.items())

    def __repr__(self) -> str:
        return "AgentDict(" + ", ".join(f"{k!r}: {s}" for k, s in self.spaces.items()) + ")"
