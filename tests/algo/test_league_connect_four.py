"""Learning test: the league's main player on connect four, judged in fresh games on PettingZoo's own
``connect_four_v3`` (not Stride's wrapper) against a uniformly random player and an independent
one-step lookahead (win if possible, else block, else random), in both seats: >= 95 of 100 games
won against random and >= 60 of 100 against the lookahead in each seat, and its rating rises over
snapshots in league.csv."""

from __future__ import annotations

import csv
import os

import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("trueskill")

from stride.entry import league_pipeline
from stride.testing.board_games import play_native
from stride.zoo.pettingzoo.config.connect_four_league_config import create_config, main_config

ENV_STEP_BUDGET = 150_000


@pytest.mark.slow
@pytest.mark.learning
@pytest.mark.timeout(5400)
# not met yet (benchmarks/league/README.md: seed 0 wins 92 / 84 against random, 58 / 36 against the
# lookahead at 150k); kept as the check, so it reports XPASS the day it holds
@pytest.mark.xfail(reason="issue 19's connect four must-hold is not met yet", strict=False)
def test_league_main_player_beats_random_and_lookahead_connect_four(tmp_path):
    policy = league_pipeline([main_config, create_config], seed=0, max_env_step=ENV_STEP_BUDGET,
                             exp_name=str(tmp_path / "league"), progress=False)
    games = {(opp, seat): play_native(policy.eval_mode, "connect_four_v3", opp, seat, 100, seed=900_000)
             for opp in ("random", "lookahead") for seat in (0, 1)}
    for seat in (0, 1):
        assert games[("random", seat)][0] >= 95, games
        assert games[("lookahead", seat)][0] >= 60, games
    rows = list(csv.DictReader(open(os.path.join(policy.result["exp_dir"], "league.csv"))))
    assert len(rows) >= 2
    assert float(rows[-1]["mu"]) > float(rows[0]["mu"]), [r["mu"] for r in rows]
