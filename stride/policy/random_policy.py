"""A collect mode that acts uniformly at random but stores transitions as the real policy does.

Used for warm-up collection (``policy.random_collect_size``): unlike DI-engine, whose SAC warm-up
is collected by the untrained policy itself, these really are uniform random actions.
"""

from __future__ import annotations

from typing import Any, Dict

import gymnasium as gym
import numpy as np

from .modes import CollectMode, PolicyCollectMode


def random_collect_mode(action_space: gym.spaces.Space[object], inner: CollectMode, seed: int = 0) -> CollectMode:
    """A ``CollectMode`` with ``inner``'s transition processing and uniformly random actions (legal
    ones where the observation carries an ``action_mask``)."""
    space = action_space
    rng = np.random.default_rng(seed)

    def sample() -> Any:
        if isinstance(space, gym.spaces.Discrete):
            return np.int64(space.start + rng.integers(space.n))
        if isinstance(space, gym.spaces.Box):
            low = np.where(np.isfinite(space.low), space.low, -1.0)
            high = np.where(np.isfinite(space.high), space.high, 1.0)
            return rng.uniform(low, high).astype(space.dtype)
        return space.sample()

    def legal(obs: Any) -> Any:
        """A uniformly random legal action of an observation with an ``action_mask`` (PettingZoo's)."""
        start = space.start if isinstance(space, gym.spaces.Discrete) else 0
        return np.int64(start + rng.choice(np.flatnonzero(obs["action_mask"])))

    def forward(data: Dict[int, Any], **kwargs: Any) -> Dict[int, Any]:
        return {env_id: {"action": legal(obs) if isinstance(obs, dict) and "action_mask" in obs else sample()}
                for env_id, obs in data.items()}

    def no_kwargs(envstep: int = 0, train_iter: int = 0) -> Dict[str, Any]:
        return {}

    return PolicyCollectMode(forward=forward, process_transition=inner.process_transition,
                             get_train_sample=inner.get_train_sample, reset=inner.reset, collect_kwargs=no_kwargs,
                             state_dict=inner.state_dict, load_state_dict=inner.load_state_dict,
                             episodes=inner, settings=inner)
