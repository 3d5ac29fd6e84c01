"""Reward models: learnt or rewritten rewards between collection and learning (GAIL, HER, RND).

:class:`BaseRewardModel` is the interface the reward-model pipeline calls; concrete models are
registered by name (``'her'``, ``'gail'``) and built with :func:`create_reward_model`.
"""

from .base import BaseRewardModel, create_reward_model
from .her import HerRewardModel
from .gail import GailRewardModel
from .rnd import RndRewardModel

__all__ = ["BaseRewardModel", "HerRewardModel", "create_reward_model"]
__all__ += ["GailRewardModel"]
__all__ += ["RndRewardModel"]
