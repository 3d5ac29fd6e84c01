"""League: matchmaking per episode seed, results into payoff and ratings, the snapshot rule,
historical players, and an exact state round trip."""

from __future__ import annotations

import collections

import pytest
import torch

pytest.importorskip("trueskill")

from stride.zoo.pettingzoo.board_rules import random_opponent, win_block_opponent
from stride.league import League, Player
from stride.utils.errors import ConfigError

AGENTS = ["player_1", "player_2"]


def _actor_of(weights):
    value = float(weights["model"]["w"])
    return lambda obs, rng: value   # recognisable: returns its weight


def _league(**cfg):
    return League(dict(cfg), make_actor=_actor_of)


def test_players_and_fixed_actors():
    league = _league()
    assert league.opponents() == ["random", "win_block"]
    assert league.actor("random") is random_opponent and league.actor("win_block") is win_block_opponent
    with pytest.raises(ValueError, match="not a frozen player"):
        league.actor("main")


def test_match_is_a_function_of_the_seed_and_remembered():
    league = _league(branch_probs=dict(pfsp=0.5, uniform=0.2, sp=0.3))
    first = [league.match(seed, AGENTS) for seed in range(200)]
    again = [league.match(seed, AGENTS) for seed in range(200)]    # replayed episodes: the same answers
    assert [None if m is None else m[0] for m in first] == [None if m is None else m[0] for m in again]
    sp = sum(m is None for m in first)
    assert 30 < sp < 90                                           # 'sp' ~ 30 %
    seats = collections.Counter(m[0] for m in first if m is not None)
    assert set(seats) == set(AGENTS) and min(seats.values()) > 40  # both seats
    other = _league(branch_probs=dict(pfsp=0.5, uniform=0.2, sp=0.3))
    assert [None if m is None else m[0] for m in (other.match(s, AGENTS) for s in range(200))] == \
           [None if m is None else m[0] for m in first]


def test_main_seat_probs_skew_the_seats():
    league = _league(branch_probs=dict(pfsp=0.0, uniform=0.0, fixed=1.0, sp=0.0), main_seat_probs=[0.2, 0.8])
    seats = collections.Counter(league.match(seed, AGENTS)[0] for seed in range(1000))  # the opponent's seat
    assert 740 < seats["player_1"] < 860 and seats["player_1"] + seats["player_2"] == 1000  # main second ~80 %
    first = _league(branch_probs=dict(pfsp=0.0, uniform=0.0, fixed=1.0, sp=0.0), main_seat_probs=[1.0, 0.0])
    assert {first.match(seed, AGENTS)[0] for seed in range(50)} == {"player_2"}
    for bad in ([0.5], [0.7, 0.7], 0.5):
        with pytest.raises(ConfigError, match="main_seat_probs=.* must be None or two probabilities"):
            _league(main_seat_probs=bad)


def test_results_feed_payoff_ratings_and_pfsp():
    league = _league(branch_probs=dict(pfsp=1.0, uniform=0.0, sp=0.0), payoff=dict(decay=1.0, min_games=1))
    mu0 = league.ratings.get("main")[0]
    met = collections.Counter()
    for seed in range(400):
        seat, act = league.match(seed, AGENTS)
        name = "random" if act is random_opponent else "win_block"
        met[name] += 1
        # main always beats random, always draws win_block -> PFSP 'squared' favours win_block
        league.result(seed, {a: (1.0 if name == "random" else 0.0) for a in AGENTS if a != seat})
    assert league.payoff.win_rate("main", "random") == 1.0
    assert league.payoff.win_rate("main", "win_block") == 0.5
    assert met["win_block"] > 3 * met["random"]
    assert league.ratings.get("main")[0] > mu0
    assert league.games["main"] == 400 and league.games["random"] + league.games["win_block"] == 400


def test_snapshot_rule():
    league = _league(snapshot_every=10, strong_win_rate=0.7, payoff=dict(decay=1.0, min_games=4))
    assert not league.should_snapshot(9)
    assert league.should_snapshot(10)                          # no historical player yet
    weights = {"model": {"w": torch.tensor(3.0)}}
    hist = league.snapshot(weights, 10)
    assert hist == Player("main_10", "historical", "main", 10, weights)
    assert league.ratings.get("main_10")[0] == league.ratings.get("main")[0]
    assert not league.should_snapshot(19)                      # < snapshot_every since the last
    assert not league.should_snapshot(25)                      # win rate vs main_10 unknown (0.5)
    assert league.should_snapshot(30)                          # 2 x snapshot_every: always
    for _ in range(4):
        league.record("main", "main_10", "win")
    assert league.should_snapshot(21)                          # 1.0 > 0.7
    assert league.actor("main_10")(None, None) == 3.0          # played through make_actor


def test_max_historical_drops_the_oldest():
    league = _league(max_historical=2)
    for it in (10, 20, 30):
        league.snapshot({"model": {"w": torch.tensor(float(it))}}, it)
    assert league.historical() == ["main_20", "main_30"]
    assert "main_10" not in league.ratings


def test_state_round_trip_is_exact():
    league = _league(branch_probs=dict(pfsp=0.6, uniform=0.2, sp=0.2))
    league.snapshot({"model": {"w": torch.tensor(1.5)}}, 5)
    for seed in range(60):
        m = league.match(seed, AGENTS)
        if seed % 7:                                           # some episodes still running at the save
            league.result(seed, {"player_1": float(seed % 3 - 1)} if m is None or m[0] == "player_2"
                          else {"player_2": float(seed % 3 - 1)})
    state = league.state_dict()
    copy = _league(branch_probs=dict(pfsp=0.6, uniform=0.2, sp=0.2))
    copy.load_state_dict(state)
    assert str(copy.state_dict()) == str(state)
    # the running episodes are met again by the same opponents; new ones are drawn alike
    for seed in list(range(0, 60, 7)) + list(range(100, 140)):
        a, b = league.match(seed, AGENTS), copy.match(seed, AGENTS)
        assert (a is None) == (b is None)
        if a is not None:
            assert a[0] == b[0] and a[1](None, None) == b[1](None, None) if a[1] not in (random_opponent, win_block_opponent) \
                else a[1] is b[1]


def test_bad_config():
    with pytest.raises(ConfigError, match="branch_probs"):
        _league(branch_probs=dict(pfsp=0.5, fsp=0.5))
    with pytest.raises(ConfigError, match="branch_probs"):
        _league(branch_probs=dict(pfsp=0.5, sp=0.4))
    with pytest.raises(ConfigError, match="unknown opponent 'minimax'"):
        _league(fixed_opponents=["random", "minimax"])
    with pytest.raises(ConfigError, match="pfsp_weighting"):
        _league(pfsp_weighting="cubic")
    # a stop threshold per fixed opponent (connect four's config asks one of win_block too); no other key
    assert dict(_league(stop_win_rate=dict(win_block=0.75)).cfg.stop_win_rate) == dict(random=0.8, win_block=0.75)
    with pytest.raises(ConfigError, match="unknown config key 'league.stop_win_rate.minimax'; valid keys here: random, win_block"):
        _league(stop_win_rate=dict(minimax=0.5))
    with pytest.raises(ConfigError, match="league.stop_win_rate.win_block"):
        _league(stop_win_rate=dict(win_block=1.5))


def test_fixed_branch_meets_only_fixed_opponents_uniformly():
    league = _league(branch_probs=dict(pfsp=0.0, uniform=0.0, fixed=1.0, sp=0.0), payoff=dict(decay=1.0, min_games=1))
    league.snapshot({"model": {"w": torch.tensor(2.0)}}, 10)
    met = collections.Counter()
    for seed in range(200):
        _, act = league.match(seed, AGENTS)
        met[act] += 1
    assert set(met) == {random_opponent, win_block_opponent} and min(met.values()) > 70
    for _ in range(20):
        league.record("main", "random", "win")      # a beaten opponent is still met as often
    met = collections.Counter(league.match(seed, AGENTS)[1] for seed in range(1000, 1200))
    assert min(met.values()) > 70


# ---- the main exploiter ------------------------------------------------------------------------
def _exploiter_league(**rule):
    return _league(main_exploiter=dict(use=True, snapshot_every=10, strong_win_rate=0.6, **rule),
                   payoff=dict(decay=1.0, min_games=4))


def test_exploiter_is_an_active_player_that_meets_the_newest_main_snapshot():
    with pytest.raises(ConfigError, match="main_exploiter.use=True"):
        _league().exploiter_matches()
    league = _exploiter_league()
    assert league.players["main_exploiter"].kind == "exploiter"
    assert league.opponents() == ["random", "win_block"]                # the main player never meets it
    matches = league.exploiter_matches()
    assert league.exploiter_target() is None and matches.match(0, AGENTS) is None   # before any snapshot
    league.snapshot({"model": {"w": torch.tensor(1.0)}}, 10)
    league.snapshot({"model": {"w": torch.tensor(2.0)}}, 20)
    assert league.exploiter_target() == "main_20"
    first = [matches.match(seed, AGENTS) for seed in range(1, 101)]
    assert {m[1](None, None) for m in first} == {2.0}                    # always the newest main snapshot
    seats = collections.Counter(m[0] for m in first)
    assert set(seats) == set(AGENTS) and min(seats.values()) > 30        # in either seat
    league.snapshot({"model": {"w": torch.tensor(3.0)}}, 30)
    assert [m[0] for m in (matches.match(s, AGENTS) for s in range(1, 101))] == [m[0] for m in first]  # remembered
    assert matches.match(500, AGENTS)[1](None, None) == 3.0              # a new episode: the newest one
    for seed in range(1, 11):                                            # the exploiter wins them all
        seat = first[seed - 1][0]
        matches.result(seed, {a: 1.0 for a in AGENTS if a != seat})
    assert league.payoff.record("main_exploiter", "main_20") == (10.0, 0.0, 0.0)
    assert league.games["main_exploiter"] == 10 and league.games["main"] == 0


def test_exploiter_snapshot_rule_and_its_snapshots_join_the_pool():
    league = _exploiter_league()
    league.snapshot({"model": {"w": torch.tensor(1.0)}}, 10)
    assert not league.should_snapshot_exploiter(9)
    assert not league.should_snapshot_exploiter(15)                      # win rate vs main_10 unknown (0.5)
    assert league.should_snapshot_exploiter(20)                          # 2 x snapshot_every: always
    for _ in range(4):
        league.record("main_exploiter", "main_10", "win")
    assert league.should_snapshot_exploiter(10)                          # 1.0 > 0.6
    hist = league.snapshot({"model": {"w": torch.tensor(7.0)}}, 10, parent="main_exploiter")
    assert hist.player_id == "main_exploiter_10" and hist.parent_id == "main_exploiter"
    assert league.ratings.get("main_exploiter_10")[0] == league.ratings.get("main_exploiter")[0]
    assert (league.last_snapshot_iter, league.last_exploiter_snapshot_iter) == (10, 10)
    assert not league.should_snapshot_exploiter(15)                      # counted from its own last snapshot
    assert league.opponents() == ["random", "win_block", "main_10", "main_exploiter_10"]  # main meets it (PFSP)
    assert league.exploiter_target() == "main_10"                        # the exploiter does not
    for _ in range(4):
        league.record("main", "main_exploiter_10", "loss")
    league2 = _league(branch_probs=dict(pfsp=1.0, uniform=0.0, sp=0.0), payoff=dict(decay=1.0, min_games=4))
    league2.load_state_dict(league.state_dict())                           # PFSP: what beats main first
    met = collections.Counter(league2.match(seed, AGENTS)[1](None, None) if league2.match(seed, AGENTS)[1]
                              not in (random_opponent, win_block_opponent) else "fixed" for seed in range(300))
    assert met[7.0] > met[1.0] and met[7.0] > met["fixed"]
    with pytest.raises(ValueError, match="snapshot parent 'random'"):
        league.snapshot({"model": {"w": torch.tensor(1.0)}}, 40, parent="random")
    with pytest.raises(ValueError, match="valid choices: main$"):
        _league().snapshot({"model": {"w": torch.tensor(1.0)}}, 40, parent="main_exploiter")


def test_exploiter_state_round_trip_is_exact():
    league = _exploiter_league()
    league.snapshot({"model": {"w": torch.tensor(1.0)}}, 10)
    league.snapshot({"model": {"w": torch.tensor(4.0)}}, 12, parent="main_exploiter")
    matches = league.exploiter_matches()
    for seed in range(20):
        seat, _ = matches.match(seed, AGENTS)
        if seed % 3:                                                     # some still running at the save
            matches.result(seed, {a: float(seed % 3 - 1) for a in AGENTS if a != seat})
    state = league.state_dict()
    copy = _exploiter_league()
    copy.load_state_dict(state)
    assert str(copy.state_dict()) == str(state) and copy.last_exploiter_snapshot_iter == 12
    for seed in range(0, 20, 3):
        a, b = matches.match(seed, AGENTS), copy.exploiter_matches().match(seed, AGENTS)
        assert a[0] == b[0] and a[1](None, None) == b[1](None, None)


def test_evaluation_games_start_from_the_initial_position_whatever_the_training_opening():
    pytest.importorskip("pettingzoo")
    from stride.league import play_games

    first_boards = []

    def player(obs, rng):
        if len(first_boards) < 20 and int(obs["observation"].sum()) <= 1:
            first_boards.append(int(obs["observation"].sum()))
        return int(rng.choice([a for a, ok in enumerate(obs["action_mask"]) if ok]))

    env_cfg = dict(env_id="pettingzoo.classic.tictactoe_v3", opening_plies=8)
    won, drawn, lost = play_games(env_cfg, player, "random", "player_1", 20, seed=0)
    assert won + drawn + lost == 20 and first_boards == [0] * 20  # every game opened on the empty board
