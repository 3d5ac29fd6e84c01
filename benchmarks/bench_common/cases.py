"""The learning benchmark's named cases: one place that says, per case, which Stride zoo config runs,
on which env, against which rl-zoo3 entry, on what env-step budget and how often it is screened.

``stride_run``, ``sb3_run`` and ``learning/bench.py`` all read this table, so a case means the same
thing to both contestants. The CartPole / Pendulum cases keep their issue-13 names (``dqn``, ``ppo``,
``sac``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict


@dataclass(frozen=True)
class Case:
    """One learning-benchmark case.

    ``algo`` is the algorithm both contestants run (Stride's policy type is the config's; SB3's
    class is ``DQN`` / ``PPO`` / ``SAC``); ``rlzoo_env`` is the key of the entry read from
    ``rl_zoo3/hyperparams/<algo>.yml`` (the same env as ``env_id`` unless said otherwise);
    ``eval_every`` is the screen interval in env steps, the same for both contestants.
    """

    algo: str
    config: str
    env_id: str
    rlzoo_env: str
    budget: int
    eval_every: int

    @property
    def title(self) -> str:
        """``"dqn, CartPole-v1"``: what the report heads the case's table with."""
        return f"{self.algo}, {self.env_id}"


CASES: Dict[str, Case] = {
    "dqn": Case("dqn", "stride.zoo.cartpole.config.cartpole_dqn_config", "CartPole-v1", "CartPole-v1", 100_000, 1_000),
    "ppo": Case("ppo", "stride.zoo.cartpole.config.cartpole_ppo_config", "CartPole-v1", "CartPole-v1", 200_000, 1_000),
    "sac": Case("sac", "stride.zoo.pendulum.config.pendulum_sac_config", "Pendulum-v1", "Pendulum-v1", 50_000, 1_000),
    # LunarLander: episodes last up to 1,000 steps, so a 10-episode screen costs up to 10,000 env
    # steps of evaluation; screening every 1,000 training steps would cost more than training.
    # rl-zoo3 2.9.2 has LunarLander-v3 entries (the same hyper-parameters as its former -v2 ones).
    # Budgets: DQN 2.5x rl-zoo3's n_timesteps (100k), PPO rl-zoo3's 1M.
    "lunarlander_dqn": Case("dqn", "stride.zoo.lunarlander.config.lunarlander_dqn_config", "LunarLander-v3",
                            "LunarLander-v3", 250_000, 10_000),
    "lunarlander_ppo": Case("ppo", "stride.zoo.lunarlander.config.lunarlander_ppo_config", "LunarLander-v3",
                            "LunarLander-v3", 1_000_000, 10_000),
}


def case(name: str) -> Case:
    """The case called ``name``; one line naming the valid ones otherwise."""
    if name not in CASES:
        raise SystemExit(f"unknown case {name!r}; valid: {', '.join(sorted(CASES))}")
    return CASES[name]
