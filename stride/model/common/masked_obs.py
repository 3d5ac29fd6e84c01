"""Dict observations a model reads: PettingZoo's ``{'observation', 'action_mask'}`` (legal
actions) and Gymnasium-Robotics' goal-conditioned ``{'observation', 'achieved_goal',
'desired_goal'}`` (the network sees ``observation`` and ``desired_goal`` concatenated, the input
of a universal value function; HER relabels ``desired_goal``).

:func:`goal_input` is the one place a goal dict becomes a network input, for every model (DQN's
through :func:`split_mask`, the continuous actor-critic's directly): Stable-Baselines3 builds a
``MultiInputPolicy`` feature extractor per algorithm and Tianshou asks the user for a
preprocessing net; here DQN, SAC, DDPG and TD3 read goal dicts the same way with no config.

A model reads the ``'observation'`` tensor and returns the mask next to its logits
(``{'logit', 'action_mask'}``), so the sampling wrappers (``argmax_sample``,
``eps_greedy_sample``, ``multinomial_sample``) pick legal actions only and a TD target takes its
max over the next observation's legal actions -- one place for the mask, whatever the algorithm.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple, TypeGuard, Union

import torch

#: a batch of observations: a tensor, or ``{'observation': tensor, 'action_mask': 0/1 tensor}``
MaybeMasked = Union[torch.Tensor, Dict[str, torch.Tensor]]


def is_goal_obs(obs: object) -> TypeGuard[Dict[str, torch.Tensor]]:
    """Whether ``obs`` is a goal-conditioned dict (``observation`` and ``desired_goal``, no mask)."""
    return isinstance(obs, dict) and "desired_goal" in obs and "observation" in obs and "action_mask" not in obs


def goal_input(obs: MaybeMasked) -> torch.Tensor:
    """A network's input: a tensor as it is, a goal dict as ``[observation, desired_goal]``
    concatenated on the last axis (``achieved_goal`` is left out: for Fetch and BitFlip it is a
    function of ``observation``); any other dict is refused by name."""
    if isinstance(obs, torch.Tensor):
        return obs
    if not is_goal_obs(obs):
        got = sorted(obs) if isinstance(obs, dict) else type(obs).__name__
        raise TypeError(f"a dict observation needs the keys 'observation' and 'desired_goal' "
                        f"(Gymnasium-Robotics'), got {got!r}")
    return torch.cat([obs["observation"].float(), obs["desired_goal"].float()], dim=-1)


def split_mask(obs: MaybeMasked) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """``(observation, action_mask as bool or None)``; a dict without both keys is refused by name."""
    if isinstance(obs, torch.Tensor):
        return obs, None
    if is_goal_obs(obs):
        return goal_input(obs), None
    if not (isinstance(obs, dict) and "observation" in obs and "action_mask" in obs):
        got = sorted(obs) if isinstance(obs, dict) else type(obs).__name__
        raise TypeError(f"a dict observation needs the keys 'observation' and 'action_mask' (PettingZoo's) or "
                        f"'observation' and 'desired_goal' (Gymnasium-Robotics'), got {got!r}")
    return obs["observation"], obs["action_mask"].bool()
