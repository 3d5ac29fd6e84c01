"""PettingZooEnv with a matchmaker: each episode's opponent and seat come from it at reset, the
opponent is stepped through the same ``act(obs, rng)`` call as a fixed one, the learner's returns
go back at the end; under MultiAgentManager the learner plays whichever seat is left."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from stride.envs import BaseEnvManager, MultiAgentManager, PettingZooEnv
from stride.zoo.pettingzoo.board_rules import random_opponent
from stride.utils.errors import ConfigError

TICTACTOE = "pettingzoo.classic.tictactoe_v3"


class Scripted:
    """Seat by seed parity: even -> the opponent plays player_1, odd -> player_2; seed % 5 == 0: self-play."""

    def __init__(self):
        self.asked, self.results, self.moves = [], [], 0

    def act(self, obs, rng):
        self.moves += 1
        return random_opponent(obs, rng)

    def match(self, seed, agents):
        self.asked.append((seed, tuple(agents)))
        if seed % 5 == 0:
            return None
        return (agents[0] if seed % 2 == 0 else agents[1]), self.act

    def result(self, seed, returns):
        self.results.append((seed, dict(returns)))


def _episode(env, seed, rng):
    obs = env.reset(seed=seed)
    seen = set()
    while True:
        seen.update(obs)
        ts = env.step({a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in obs.items()})
        if ts.done:
            return seen, ts
        obs = ts.obs


def test_seat_opponent_and_result_per_episode():
    mm = Scripted()
    env = PettingZooEnv(cfg={"env_id": TICTACTOE}, matchmaker=mm)
    assert env.agents == ["player_1", "player_2"]        # any seat may be the learner's
    rng = np.random.default_rng(0)
    seen, ts = _episode(env, 2, rng)                      # opponent is player_1
    assert seen == {"player_2"} and mm.moves > 0
    assert mm.results[-1][0] == 2 and set(mm.results[-1][1]) == {"player_2"}
    assert mm.results[-1][1]["player_2"] == ts.info["eval_episode_return"]["player_2"]
    seen, _ = _episode(env, 3, rng)                       # opponent is player_2
    assert seen == {"player_1"} and set(mm.results[-1][1]) == {"player_1"}
    moves = mm.moves
    seen, _ = _episode(env, 5, rng)                       # self-play: both seats are the learner's
    assert seen == {"player_1", "player_2"} and mm.moves == moves
    assert [s for s, _ in mm.asked] == [2, 3, 5]
    env.close()


def test_under_multi_agent_manager_only_the_learners_seat_acts():
    mm = Scripted()
    manager = MultiAgentManager(BaseEnvManager([lambda: PettingZooEnv(cfg={"env_id": TICTACTOE}, matchmaker=mm)
                                                for _ in range(2)]))
    manager.seed(1)
    manager.launch()
    rng = np.random.default_rng(0)
    for _ in range(200):
        ready = manager.ready_obs
        manager.step({i: int(rng.choice(np.flatnonzero(o["action_mask"]))) for i, o in ready.items()})
    assert len(mm.results) > 10
    assert all(len(r) == 1 or len(r) == 2 for _, r in mm.results)
    manager.close()


def test_fixed_opponent_and_matchmaker_together_is_refused():
    with pytest.raises(ConfigError, match="opponent='random'.*not both"):
        PettingZooEnv(cfg={"env_id": TICTACTOE, "opponent": "random"}, matchmaker=Scripted())
