"""Playing a league player: a policy as an opponent, and games against fixed opponents.

:func:`policy_opponent` turns an eval mode (a frozen player's, :func:`~stride.league.frozen`) into
the ``act(obs, rng)`` callable every opponent of :class:`~stride.envs.PettingZooEnv` is, so a
frozen league player sits in the env's opponent slot exactly where ``'random'`` does.
:func:`play_games` plays any such callable against a fixed opponent in a chosen seat through
``PettingZooEnv``'s own step (the opponent inside the env, as in training), which is how the
league evaluates its main player after each snapshot.
"""

from __future__ import annotations

from typing import Dict, Mapping, Tuple

import numpy as np
import numpy.typing as npt

from ..envs.opponents import Opponent
from ..envs.pettingzoo_env import PettingZooEnv
from ..policy.base_policy import EvalMode


def policy_opponent(eval_mode: EvalMode) -> Opponent:
    """``act(obs, rng)`` of a policy's eval mode on one PettingZoo observation (its greedy action;
    ``rng`` unused: a frozen player is deterministic)."""

    def act(obs: Mapping[str, npt.NDArray[np.generic]], rng: np.random.Generator) -> int:
        return int(eval_mode.forward({0: dict(obs)})[0]["action"])

    return act


def play_games(env_cfg: Mapping[str, object], player: Opponent, opponent: str, seat: str, n: int,
               seed: int = 0) -> Tuple[int, int, int]:
    """``(won, drawn, lost)`` of ``player`` in ``n`` games against the fixed ``opponent`` (a name of
    ``stride.envs.opponents``), ``player`` playing the agent ``seat``; game ``i`` is seeded
    ``seed + i``."""
    env = PettingZooEnv(cfg={**dict(env_cfg), "opponent": None, "opponent_agent": None})
    agents = env.agents
    env.close()
    if seat not in agents:
        raise ValueError(f"seat {seat!r} is not an agent of {env.env_id}; valid choices: {', '.join(agents)}")
    other = next(a for a in agents if a != seat)
    # from the initial position: a training option ``opening_plies`` never reaches the evaluation
    env = PettingZooEnv(cfg={**dict(env_cfg), "opponent": opponent, "opponent_agent": other, "opening_plies": 0})
    rng = np.random.default_rng(seed)
    won = drawn = lost = 0
    try:
        for i in range(n):
            obs: Dict[str, object] = dict(env.reset(seed=seed + i))
            while True:
                ts = env.step({seat: player(obs[seat], rng)})  # type: ignore[arg-type]
                if ts.done:
                    ret = ts.info["eval_episode_return"][seat]  # type: ignore[index]
                    won, drawn, lost = won + (ret > 0), drawn + (ret == 0), lost + (ret < 0)
                    break
                obs = dict(ts.obs)
    finally:
        env.close()
    return won, drawn, lost
