"""TD3 (Fujimoto, van Hoof & Meger, 2018, "Addressing Function Approximation Error in Actor-Critic
Methods"): DDPG plus three fixes against Q overestimation, all switched on here and implemented in
``ddpg.py`` (read that file for the learn step, top to bottom):

1. clipped double-Q: twin critics, the TD target bootstraps from their minimum
   (``model.twin_critic=True``; ``rl_utils.min_q_value``);
2. target policy smoothing: the target action is ``clamp(mu'(s') + clamp(N(0, 0.2), -0.5, 0.5), -1, 1)``
   (``learn.noise``, via the ``action_noise`` wrapper on the target model);
3. delayed policy updates: the actor and the target networks move once every 2 critic updates
   (``learn.actor_update_freq=2``).

Better than DI-engine on purpose: the same as ``ddpg.py`` (truncation bootstraps instead of
``ignore_done``, out-of-place smoothing noise, the delay counter saved with the learn state), and
one learn step, not two near-copies, for DDPG and TD3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..config.view import declared, subsection
from ..utils.registry import POLICY_REGISTRY
from .ddpg import DDPGConfig, DDPGLearnConfig, DDPGPolicy
from .views import ScheduleValue


@dataclass(frozen=True)
class TD3LearnConfig(DDPGLearnConfig):
    learning_rate_actor: ScheduleValue = 1e-3
    learning_rate_critic: ScheduleValue = 1e-3
    # (int) actor and target updates once every this many critic updates.
    actor_update_freq: int = 2
    # (bool) target policy smoothing with noise N(0, noise_sigma) clipped to noise_range.
    noise: bool = True
    noise_sigma: float = 0.2
    noise_range: Mapping[str, float] = declared(dict(min=-0.5, max=0.5))


@dataclass(frozen=True)
class TD3Config(DDPGConfig):
    type: str = "td3"
    # (model.twin_critic) two critics; the TD target uses their minimum.
    model: Mapping[str, object] = declared(dict(twin_critic=True))
    learn: TD3LearnConfig = subsection(TD3LearnConfig)


@POLICY_REGISTRY.register("td3")
class TD3Policy(DDPGPolicy):
    """TD3: ``DDPGPolicy`` with twin critics, target policy smoothing and delayed actor updates."""

    config_view = TD3Config
    _typed: TD3Config
