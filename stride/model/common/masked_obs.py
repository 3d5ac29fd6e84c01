"""Observations that carry their legal actions: PettingZoo's ``{'observation', 'action_mask'}``.

A model reads the ``'observation'`` tensor and returns the mask next to its logits
(``{'logit', 'action_mask'}``), so the sampling wrappers (``argmax_sample``,
``eps_greedy_sample``, ``multinomial_sample``) pick legal actions only and a TD target takes its
max over the next observation's legal actions -- one place for the mask, whatever the algorithm.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple, Union

import torch

#: a batch of observations: a tensor, or ``{'observation': tensor, 'action_mask': 0/1 tensor}``
MaybeMasked = Union[torch.Tensor, Dict[str, torch.Tensor]]


def split_mask(obs: MaybeMasked) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """``(observation, action_mask as bool or None)``; a dict without both keys is refused by name."""
    if isinstance(obs, torch.Tensor):
        return obs, None
    if not (isinstance(obs, dict) and "observation" in obs and "action_mask" in obs):
        got = sorted(obs) if isinstance(obs, dict) else type(obs).__name__
        raise TypeError(f"a dict observation needs the keys 'observation' and 'action_mask' (PettingZoo's), got {got!r}")
    return obs["observation"], obs["action_mask"].bool()
