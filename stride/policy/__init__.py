"""Policies: the base class, its three modes (typed Protocols, ``stride.policy.modes``), and one file per algorithm."""

from .base_policy import Policy
from .modes import CollectMode, EvalMode, LearnMode
from .views import PolicyConfig
from .dqn import DQNPolicy
from .ddpg import DDPGPolicy
from .td3 import TD3Policy
from .sac import SACPolicy
from .ppo import PPOPolicy
from .a2c import A2CPolicy
from .impala import IMPALAPolicy
from .r2d2 import R2D2Policy
# demonstrations and offline
from .bc import BCPolicy
from .sqil import SQILPolicy, SQILSACPolicy
from .r2d3 import R2D3Policy

__all__ = ["Policy", "PolicyConfig", "LearnMode", "CollectMode", "EvalMode", "DQNPolicy", "DDPGPolicy", "TD3Policy", "SACPolicy", "PPOPolicy", "A2CPolicy", "IMPALAPolicy",
           "R2D2Policy", "R2D3Policy", "BCPolicy", "SQILPolicy", "SQILSACPolicy"]
