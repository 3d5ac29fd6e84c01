"""Learning test: the league's main player on tic-tac-toe, judged in fresh games on PettingZoo's own
``tictactoe_v3`` (not Stride's wrapper) against a uniformly random player and an independent
one-step lookahead (win if possible, else block), in both seats: it never loses to either, wins
>= 95 of 100 games as first player and >= 80 as second against random, and its rating rises over
snapshots in league.csv. Beyond the sampled games, the exact check: no line of play wins against it
in either seat (``losing_lines``: the whole game tree)."""

from __future__ import annotations

import csv
import os

import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("trueskill")

from stride.entry import league_pipeline
from stride.testing.board_games import losing_lines, play_native
from stride.zoo.pettingzoo.config.tictactoe_league_config import create_config, main_config

ENV_STEP_BUDGET = 300_000  # the config's; seeds 0-4 stopped by its rule at 56k-196k


@pytest.mark.slow
@pytest.mark.learning
@pytest.mark.timeout(1800)
def test_league_main_player_never_loses_tictactoe(tmp_path):
    policy = league_pipeline([main_config, create_config], seed=0, max_env_step=ENV_STEP_BUDGET,
                             exp_name=str(tmp_path / "league"), progress=False)
    games = {(opp, seat): play_native(policy.eval_mode, "tictactoe_v3", opp, seat, 100, seed=900_000)
             for opp in ("random", "lookahead") for seat in (0, 1)}
    for (opp, seat), (won, drawn, lost) in games.items():
        assert lost == 0, f"lost {lost} of 100 games to {opp} as player {seat + 1}: {games}"
    assert games[("random", 0)][0] >= 95, games
    assert games[("random", 1)][0] >= 80, games
    assert policy.result["stop"], policy.result  # stopped by the confirmed stop rule, not the budget
    assert losing_lines(policy.eval_mode, 0) == [] and losing_lines(policy.eval_mode, 1) == []
    rows = list(csv.DictReader(open(os.path.join(policy.result["exp_dir"], "league.csv"))))
    assert len(rows) >= 2
    assert float(rows[-1]["mu"]) > float(rows[0]["mu"]), [r["mu"] for r in rows]
