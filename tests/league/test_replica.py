"""LeagueReplica: a collector's copy of the driver's league draws the matches the serial league
would, keeps the finished games for the driver, and follows the driver's state without losing its
running episodes; the driver recording those games ends where the serial league ends."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("trueskill")

from stride.zoo.pettingzoo.board_rules import random_opponent, win_block_opponent
from stride.league import League, LeagueReplica

AGENTS = ["player_1", "player_2"]
CFG = dict(branch_probs=dict(pfsp=0.5, uniform=0.2, sp=0.3), payoff=dict(decay=1.0, min_games=1))


def _actor_of(weights):
    value = float(weights["model"]["w"])
    return lambda obs, rng: value


def _same(a, b):
    """Two matches alike: both self-play, or the same seat and opponent (a frozen one by its weights)."""
    if a is None or b is None:
        return a is None and b is None
    fixed = (random_opponent, win_block_opponent)
    return a[0] == b[0] and (a[1] is b[1] if a[1] in fixed else b[1] not in fixed and a[1](None, None) == b[1](None, None))


def _returns(seed, chosen):
    """A made-up result: the main player's return by agent (both seats in self-play)."""
    score = float(seed % 3 - 1)
    return {a: score for a in AGENTS} if chosen is None else {a: score for a in AGENTS if a != chosen[0]}


def test_finish_then_add_game_is_result():
    serial, split = League(dict(CFG), _actor_of), League(dict(CFG), _actor_of)
    for league in (serial, split):
        league.snapshot({"model": {"w": torch.tensor(1.0)}}, 5)
    for seed in range(120):
        a, b = serial.match(seed, AGENTS), split.match(seed, AGENTS)
        serial.result(seed, _returns(seed, a))
        game = split.finish(seed, _returns(seed, b))
        assert (game is None) == (a is None)
        split.add_game(game)
    assert str(serial.state_dict()) == str(split.state_dict())
    assert serial.sp_games > 0 and serial.payoff.state_dict()["records"]


def test_replica_plays_the_drivers_matches_and_the_driver_records_them():
    driver, serial = League(dict(CFG), _actor_of), League(dict(CFG), _actor_of)
    for league in (driver, serial):
        league.snapshot({"model": {"w": torch.tensor(2.0)}}, 5)
    replica = LeagueReplica(dict(CFG), _actor_of)
    assert replica.match(0, AGENTS) is None or replica.match(0, AGENTS)[1] is not None
    replica.result(0, {"player_1": 0.0})  # before any sync: the replica's own initial league
    replica.take_games()
    replica.sync(1, driver.state_dict())
    assert replica.league.historical() == ["main_5"]
    seen = set()
    for seed in range(1, 100):
        a, b = serial.match(seed, AGENTS), replica.match(seed, AGENTS)
        assert _same(a, b)
        if b is not None and b[1] not in (random_opponent, win_block_opponent):
            seen.add(b[1](None, None))
        serial.result(seed, _returns(seed, a))
        replica.result(seed, _returns(seed, b))
        for game in replica.take_games():
            driver.add_game(game)
        replica.sync(seed + 1, driver.state_dict())  # synced after every game: the serial league exactly
    assert 2.0 in seen  # the frozen player was played, with the weights the driver sent
    assert replica.take_games() == []
    for key in ("payoff", "ratings", "games", "sp_games"):
        assert str(driver.state_dict()[key]) == str(serial.state_dict()[key]), key


def test_follow_keeps_running_episodes_and_built_actors():
    driver = League(dict(CFG), _actor_of)
    driver.snapshot({"model": {"w": torch.tensor(3.0)}}, 5)
    replica = LeagueReplica(dict(CFG), _actor_of)
    replica.sync(1, driver.state_dict())
    running = {s: replica.match(s, AGENTS) for s in range(40)}
    built = replica.league.actor("main_5")
    driver.snapshot({"model": {"w": torch.tensor(4.0)}}, 10)
    driver.record("main", "random", "win")
    replica.sync(2, driver.state_dict())
    assert replica.league.historical() == ["main_5", "main_10"]
    assert replica.league.actor("main_5") is built  # not rebuilt: a frozen player never changes
    assert replica.league.payoff.state_dict() == driver.payoff.state_dict()
    for s, m in running.items():  # episodes running at the sync meet the opponent they started with
        again = replica.match(s, AGENTS)
        assert _same(m, again) and (m is None or m[1] is again[1])
    replica.sync(2, {})  # a version followed already: nothing read
    for s in range(40):
        replica.result(s, {"player_1": 1.0, "player_2": 1.0})
    games = replica.take_games()
    assert len(games) == 40 and sum(g is None for g in games) == sum(m is None for m in running.values())
