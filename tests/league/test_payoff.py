"""Payoff: decayed counts, win rates (hand-computed), the reverse view, state round trip."""

from __future__ import annotations

import pytest

from stride.league import Payoff
from stride.utils.errors import ConfigError


def test_decay_and_win_rate_hand_computed():
    p = Payoff(decay=0.5, min_games=1)
    p.update("a", "b", "win")            # a: [1, 0, 0]
    p.update("a", "b", "draw")           # a: [0.5, 1, 0]
    p.update("b", "a", "win")            # a lost: [0.25, 0.5, 1]
    assert p.record("a", "b") == (0.25, 0.5, 1.0)
    assert p.record("b", "a") == (1.0, 0.5, 0.25)
    assert p.games("a", "b") == pytest.approx(1.75)
    assert p.win_rate("a", "b") == pytest.approx((0.25 + 0.25) / 1.75)
    assert p.win_rate("b", "a") == pytest.approx((1.0 + 0.25) / 1.75)
    assert p.win_rate("a", "b") + p.win_rate("b", "a") == pytest.approx(1.0)


def test_few_games_is_half():
    p = Payoff(decay=0.99, min_games=8)
    for _ in range(7):
        p.update("a", "b", "win")
    assert p.win_rate("a", "b") == 0.5   # 7 games decayed to < 8
    assert p.win_rate("a", "c") == 0.5   # never played
    for _ in range(3):
        p.update("a", "b", "win")
    assert p.win_rate("a", "b") == 1.0


def test_pairs_decay_independently_and_remove():
    p = Payoff(decay=0.5, min_games=0)
    p.update("a", "b", "win")
    p.update("a", "c", "loss")
    p.update("a", "c", "loss")
    assert p.record("a", "b") == (1.0, 0.0, 0.0)   # a-c games leave a-b alone
    assert p.record("a", "c") == (0.0, 0.0, 1.5)
    p.remove("c")
    assert p.record("a", "c") == (0.0, 0.0, 0.0)
    assert p.record("a", "b") == (1.0, 0.0, 0.0)


def test_state_round_trip():
    p = Payoff(decay=0.9, min_games=2)
    for o in ("win", "draw", "loss", "win"):
        p.update("main", "random", o)
    q = Payoff(decay=0.5, min_games=100)
    q.load_state_dict(p.state_dict())
    assert q.state_dict() == p.state_dict()
    assert q.win_rate("random", "main") == p.win_rate("random", "main")


def test_bad_input():
    with pytest.raises(ValueError, match="unknown outcome 'won'; valid choices: win, draw, loss"):
        Payoff().update("a", "b", "won")
    with pytest.raises(ValueError, match="two players"):
        Payoff().update("a", "a", "win")
    with pytest.raises(ConfigError, match="decay"):
        Payoff(decay=0.0)
