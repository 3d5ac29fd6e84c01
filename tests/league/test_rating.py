"""TrueSkill ratings through the trueskill library."""

from __future__ import annotations

import pytest

pytest.importorskip("trueskill")

from stride.league import Ratings


def test_win_moves_means_apart_and_draw_keeps_equal_players_equal():
    r = Ratings(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=0.0, draw_probability=0.1)
    for p in ("a", "b", "c", "d"):
        r.add(p)
    r.update("a", "b", "win")
    (mu_a, s_a), (mu_b, s_b) = r.get("a"), r.get("b")
    assert mu_a > 25 > mu_b and mu_a - 25 == pytest.approx(25 - mu_b)
    assert s_a < 25 / 3
    r.update("c", "d", "draw")
    assert r.get("c")[0] == pytest.approx(25.0) and r.get("d")[0] == pytest.approx(25.0)
    r.update("c", "d", "loss")        # from c's side
    assert r.get("d")[0] > r.get("c")[0]


def test_state_round_trip_and_snapshot_mean():
    r = Ratings()
    r.add("main")
    r.add("random")
    for _ in range(5):
        r.update("main", "random", "win")
    r.add("main_10", mu=r.get("main")[0])
    assert r.get("main_10") == (r.get("main")[0], pytest.approx(25 / 3))
    q = Ratings()
    q.load_state_dict(r.state_dict())
    assert q.state_dict() == r.state_dict()
    q.update("main", "random", "win")
    r.update("main", "random", "win")
    assert q.get("main") == pytest.approx(r.get("main"))
