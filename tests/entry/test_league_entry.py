"""``league_pipeline`` end to end on tic-tac-toe (a few seconds): snapshots, league.csv, the
checkpoint's league, an interrupted-then-resumed run equal to an uninterrupted one, the CLI mode
and its one-line errors."""

from __future__ import annotations

import copy
import csv
import os

import pytest
import torch

pytest.importorskip("pettingzoo")
pytest.importorskip("trueskill")

from stride.entry import league_pipeline
from stride.entry.cli import main as cli_main
from stride.utils.errors import ConfigError
from stride.zoo.pettingzoo.config.tictactoe_league_config import create_config, main_config

pytestmark = pytest.mark.timeout(120)


def _small():
    m = copy.deepcopy(main_config)
    m["env"]["collector_env_num"] = 2
    m["policy"]["model"]["encoder_hidden_size_list"] = [32, 32]
    m["policy"]["random_collect_size"] = 32
    m["policy"]["learn"]["batch_size"] = 16
    m["policy"]["learn"]["learner"] = dict(hook=dict(save_ckpt_after_iter=10_000))
    m["league"].update(snapshot_every=10, eval_episode=3, stop_max_loss_rate=None, confirm_episode=0,
                       main_exploiter=dict(use=False))   # the exploiter's own tests turn it on
    return m


def _league_state(exp, train_iter):
    state = torch.load(os.path.join(exp, "ckpt", f"iteration_{train_iter}.pth.tar"), weights_only=True)
    return state["components"]["league"], state["policy"]["model"]


def test_pipeline_snapshots_logs_and_checkpoints_the_league(tmp_path):
    policy = league_pipeline([_small(), create_config], seed=0, max_env_step=300, exp_name=str(tmp_path / "run"),
                             progress=False)
    result = policy.result
    assert result["env_step"] >= 300 and result["snapshots"] >= 2
    rows = list(csv.DictReader(open(tmp_path / "run" / "league.csv")))
    assert len(rows) == result["snapshots"]
    for row in rows:
        for opp in ("random", "win_block"):
            for seat in ("player_1", "player_2"):
                assert sum(int(row[f"{opp}_{seat}_{k}"]) for k in ("won", "drawn", "lost")) == 3
        assert float(row["sigma"]) > 0 and int(row["games"]) > 0
    league, _ = _league_state(str(tmp_path / "run"), result["train_iter"])
    kinds = [p["kind"] for p in league["players"]]
    assert kinds.count("historical") == result["snapshots"] and kinds[:3] == ["main", "fixed", "fixed"]
    assert league["payoff"]["records"]
    # not stopped: the returned policy is the main player at its best evaluation (return_best)
    best = next(p for p in league["players"] if p["player_id"] == result["returned_snapshot"])
    for k, v in best["weights"]["model"].items():
        assert torch.equal(policy.learn_mode.state_dict()["model"][k], v), k
    # the returned policy acts on PettingZoo's per-agent observation keyed by env id
    obs = {"observation": torch.zeros(3, 3, 2, dtype=torch.int8).numpy(),
           "action_mask": torch.ones(9, dtype=torch.int8).numpy()}
    assert 0 <= int(policy.eval_mode.forward({7: obs})[7]["action"]) < 9


# (4, 150, 300): the checkpoint falls while a self-play move waits for its next turn (the collector
# keeps what it sent until the env answers: before that was in its state, resuming here failed)
@pytest.mark.parametrize("seed,cut,total", [(3, 350, 700), (4, 150, 300)])
def test_resumed_run_equals_uninterrupted(tmp_path, seed, cut, total):
    ref = league_pipeline([_small(), create_config], seed=seed, max_env_step=total, exp_name=str(tmp_path / "ref"),
                          progress=False).result
    first = league_pipeline([_small(), create_config], seed=seed, max_env_step=cut, exp_name=str(tmp_path / "run"),
                            progress=False).result
    assert first["train_iter"] < ref["train_iter"]
    resumed = league_pipeline(None, max_env_step=total, resume=str(tmp_path / "run"), progress=False).result
    assert (resumed["env_step"], resumed["train_iter"]) == (ref["env_step"], ref["train_iter"])
    # the clocks go on from the checkpoint's (the whole run is counted, not the resumed process alone)
    assert resumed["train_cpu_seconds"] > first["train_cpu_seconds"] and resumed["wall_seconds"] > first["wall_seconds"]
    for key in ("train_cpu_seconds", "wall_seconds"):
        column = [float(r[key]) for r in csv.DictReader(open(tmp_path / "run" / "league.csv"))]
        assert column == sorted(column), f"{key} went back at the resume: {column}"
    league_ref, model_ref = _league_state(str(tmp_path / "ref"), ref["train_iter"])
    league_res, model_res = _league_state(str(tmp_path / "run"), resumed["train_iter"])
    assert league_res["payoff"] == league_ref["payoff"]
    assert league_res["ratings"] == league_ref["ratings"]
    assert league_res["games"] == league_ref["games"] and league_res["running"] == league_ref["running"]
    assert [p["player_id"] for p in league_res["players"]] == [p["player_id"] for p in league_ref["players"]]
    for a, b in zip(league_res["players"], league_ref["players"]):
        if a["weights"] is not None:
            for k in a["weights"]["model"]:
                assert torch.equal(a["weights"]["model"][k], b["weights"]["model"][k])
    for k in model_ref:
        assert torch.equal(model_res[k], model_ref[k]), k


@pytest.mark.parametrize("confirm_loses", [False, True])
def test_a_screen_that_meets_the_stop_rule_stops_the_run_only_if_the_confirmation_does(tmp_path, monkeypatch,
                                                                                         confirm_loses):
    import stride.entry.league_eval as league_eval

    m = _small()
    m["league"].update(eval_episode=3, confirm_episode=7, stop_max_loss_rate=0.0, stop_win_rate=dict(random=0.5))
    played = []

    def scripted(env_cfg, player, opponent, seat, n, seed=0):  # every screen is perfect; a confirmation loses one game
        played.append(n)
        return (n - 1, 0, 1) if (n == 7 and confirm_loses) else (n, 0, 0)

    monkeypatch.setattr(league_eval, "play_games", scripted)
    result = league_pipeline([m, create_config], seed=0, max_env_step=300, exp_name=str(tmp_path / "run"),
                             progress=False).result
    rows = list(csv.DictReader(open(tmp_path / "run" / "league.csv")))
    if confirm_loses:  # each snapshot's screen passes, its confirmation fails at the first cell: the run goes on
        assert not result["stop"] and len(rows) == result["snapshots"] >= 2
        assert all(r["confirmed"] == "False" and r["confirm_lost"] == "1" for r in rows)
        assert played == [3, 3, 3, 3, 7] * len(rows)
    else:  # the first screen and its confirmation (7 games in each of the 4 cells) stop the run
        assert result["stop"] and len(rows) == 1 and rows[0]["confirmed"] == "True"
        assert rows[0]["confirm_won"] == "28" and played == [3, 3, 3, 3, 7, 7, 7, 7]


@pytest.mark.parametrize("need,stops", [([1.0, 0.6], True), ([1.0, 0.7], False), (0.6, True), (0.7, False)])
def test_stop_win_rate_per_seat(tmp_path, monkeypatch, need, stops):
    import stride.entry.league_eval as league_eval

    m = _small()
    m["league"].update(eval_episode=10, stop_max_loss_rate=0.0, stop_win_rate=dict(random=need))
    # the first seat wins every game, the second 6 of 10 (the rest drawn)
    monkeypatch.setattr(league_eval, "play_games",
                        lambda env_cfg, player, opponent, seat, n, seed=0: (n, 0, 0) if seat == "player_1" else (6, 4, 0))
    result = league_pipeline([m, create_config], seed=0, max_env_step=200, exp_name=str(tmp_path / "run"),
                             progress=False).result
    assert result["stop"] is stops


def test_return_best_prefers_the_evaluation_closest_to_the_stop_rule(tmp_path, monkeypatch):
    import stride.entry.league_eval as league_eval

    m = _small()
    m["league"].update(eval_episode=10, stop_max_loss_rate=0.0, stop_win_rate=dict(random=[1.0, 0.6]))
    calls = []

    def scripted(env_cfg, player, opponent, seat, n, seed=0):
        calls.append(1)
        second_eval = (len(calls) - 1) // 4 == 1  # 4 cells per evaluation
        if opponent != "random":
            return (0, n, 0)
        if second_eval:  # more wins in all (16), but 20 points short of the first seat's 100 %
            return (8, 2, 0)
        return (10, 0, 0) if seat == "player_1" else (5, 5, 0)  # 15 wins, 10 points short in the second seat

    monkeypatch.setattr(league_eval, "play_games", scripted)
    result = league_pipeline([m, create_config], seed=0, max_env_step=200, exp_name=str(tmp_path / "run"),
                             progress=False).result
    rows = list(csv.DictReader(open(tmp_path / "run" / "league.csv")))
    assert not result["stop"] and len(rows) >= 2
    assert result["returned_snapshot"] == rows[0]["snapshot"]


def test_stop_win_rate_needs_one_rate_per_seat(tmp_path):
    m = _small()
    m["league"]["stop_win_rate"] = dict(random=[0.9, 0.8, 0.7])
    with pytest.raises(ConfigError, match=r"league.stop_win_rate.random=\[0.9, 0.8, 0.7\] gives 3 seats' win rates; "
                                          r"valid choices: one number, or one per seat \(player_1, player_2\)"):
        league_pipeline([m, create_config], exp_name=str(tmp_path / "a"), progress=False)
    m["league"]["stop_win_rate"] = dict(random=[0.9, 1.5])
    with pytest.raises(ConfigError, match=r"league.stop_win_rate.random' must be a number in \[0, 1\] or a list of them"):
        league_pipeline([m, create_config], exp_name=str(tmp_path / "b"), progress=False)


def test_bad_configs_are_one_line_errors(tmp_path):
    m = _small()
    m["env"]["opponent"] = "random"
    with pytest.raises(ConfigError, match="env.opponent='random'.*set env.opponent=None"):
        league_pipeline([m, create_config], exp_name=str(tmp_path / "a"), progress=False)
    c = dict(create_config)
    c.pop("league")
    m = _small()
    m.pop("league")
    with pytest.raises(ConfigError, match="needs a league section"):
        league_pipeline([m, c], exp_name=str(tmp_path / "b"), progress=False)
    m = _small()
    m["league"]["branch_probs"] = dict(pfsp=0.9, uniform=0.2, sp=0.0)
    with pytest.raises(ConfigError, match="branch_probs"):
        league_pipeline([m, create_config], exp_name=str(tmp_path / "c"), progress=False)


def test_cli_league_mode(tmp_path, capsys):
    cfg = tmp_path / "small_league_config.py"
    cfg.write_text("import copy\nfrom tests.entry.test_league_entry import _small\n"
                   "from stride.zoo.pettingzoo.config.tictactoe_league_config import create_config\n"
                   "main_config = _small()\n")
    code = cli_main(["-m", "league", "-c", str(cfg), "-s", "0", "--env-step", "200", "--no-progress",
                     "--exp-name", str(tmp_path / "cli")])
    assert code == 0
    out = capsys.readouterr().out
    assert "stopped at the step/iteration limit" in out
    assert (tmp_path / "cli" / "league.csv").exists()
    assert "(config, ckpt/, log/, league.csv, result.json)" in out  # what the folder holds: no progress.csv
    assert cli_main(["-m", "league", "-c", str(cfg), "--train-iter", "5"]) == 2
    assert "-m league takes no --train-iter" in capsys.readouterr().err


def _small_c4():
    from stride.zoo.pettingzoo.config import connect_four_league_config as c4

    m = copy.deepcopy(c4.main_config)
    m["env"]["collector_env_num"] = 2
    m["policy"]["model"]["encoder_hidden_size_list"] = [32]
    m["policy"]["random_collect_size"] = 32
    m["policy"]["learn"].update(batch_size=16, learner=dict(hook=dict(save_ckpt_after_iter=10_000)))
    m["league"].update(snapshot_every=10, eval_episode=2)
    return [m, c4.create_config]


def test_connect_four_zoo_config_runs_and_logs_both_seats(tmp_path):
    """The connect-four league config, shrunk: its seats (player_0 / player_1), its one fixed
    opponent and its stop thresholds against random and win_block reach league.csv."""
    policy = league_pipeline(_small_c4(), seed=0, max_env_step=200, exp_name=str(tmp_path / "c4"), progress=False)
    assert policy.result["snapshots"] >= 1 and not policy.result["stop"]
    rows = list(csv.DictReader(open(tmp_path / "c4" / "league.csv")))
    for opp in ("random", "win_block"):
        for seat in ("player_0", "player_1"):
            assert sum(int(rows[-1][f"{opp}_{seat}_{k}"]) for k in ("won", "drawn", "lost")) == 2


def test_connect_four_resumed_run_equals_uninterrupted(tmp_path):
    """A run that ended at its limit with a self-play move still waiting for its transition (the
    collector's in-flight send, now in its checkpoint; before, the resumed run stopped on a KeyError)."""
    ref = league_pipeline(_small_c4(), seed=0, max_env_step=600, exp_name=str(tmp_path / "ref"), progress=False).result
    league_pipeline(_small_c4(), seed=0, max_env_step=300, exp_name=str(tmp_path / "run"), progress=False)
    resumed = league_pipeline(None, max_env_step=600, resume=str(tmp_path / "run"), progress=False).result
    assert (resumed["env_step"], resumed["train_iter"]) == (ref["env_step"], ref["train_iter"])
    _, model_ref = _league_state(str(tmp_path / "ref"), ref["train_iter"])
    _, model_res = _league_state(str(tmp_path / "run"), resumed["train_iter"])
    for k in model_ref:
        assert torch.equal(model_res[k], model_ref[k]), k


def _with_exploiter():
    m = _small()
    m["league"]["main_exploiter"] = dict(use=True, snapshot_every=10)
    return m


def test_main_exploiter_snapshots_join_the_league_and_it_is_reset(tmp_path):
    from stride.entry.league_entry import main_exploiter
    from stride.entry.serial_entry import load_cfg
    from stride.league import League

    cfg, _ = load_cfg([_with_exploiter(), create_config], 0, str(tmp_path / "x"), None)
    league = League(cfg.league, make_actor=lambda w: (lambda obs, rng: int(obs["action_mask"].argmax())))
    exploiter = main_exploiter(cfg, league)
    try:
        league.snapshot({"model": {}}, 10)                    # a main player to exploit (first free cell)
        initial = {k: v.clone() for k, v in exploiter.policy.learn_mode.state_dict()["model"].items()}
        taken = None
        while taken is None:
            taken = exploiter.step()
        assert taken == f"main_exploiter_{exploiter.train_iter}" and 10 <= exploiter.train_iter <= 21
        assert league.payoff.games("main_exploiter", "main_10") > 0   # it played the main player's snapshot
        snap = league.players[taken]
        assert snap.kind == "historical" and snap.parent_id == "main_exploiter"
        assert any(not torch.equal(snap.weights["model"][k], initial[k]) for k in initial)  # it had learned
        after = exploiter.policy.learn_mode.state_dict()["model"]
        assert all(torch.equal(after[k], initial[k]) for k in initial)                     # reset ...
        assert exploiter.buffer.count() == 0 and exploiter.resets == 1                     # ... with no data
    finally:
        exploiter.close()


def test_resumed_run_with_exploiter_equals_uninterrupted(tmp_path):
    ref = league_pipeline([_with_exploiter(), create_config], seed=4, max_env_step=400, exp_name=str(tmp_path / "ref"),
                          progress=False).result
    assert ref["exploiter_snapshots"] >= 1 and ref["exploiter_env_step"] > 0
    first = league_pipeline([_with_exploiter(), create_config], seed=4, max_env_step=200,
                            exp_name=str(tmp_path / "run"), progress=False).result
    assert first["train_iter"] < ref["train_iter"]
    resumed = league_pipeline(None, max_env_step=400, resume=str(tmp_path / "run"), progress=False).result
    for key in ("env_step", "train_iter", "exploiter_env_step", "exploiter_train_iter", "exploiter_snapshots"):
        assert resumed[key] == ref[key], key
    league_ref, model_ref = _league_state(str(tmp_path / "ref"), ref["train_iter"])
    league_res, model_res = _league_state(str(tmp_path / "run"), resumed["train_iter"])
    assert league_res["payoff"] == league_ref["payoff"] and league_res["ratings"] == league_ref["ratings"]
    assert league_res["exploiter_running"] == league_ref["exploiter_running"]
    assert [p["player_id"] for p in league_res["players"]] == [p["player_id"] for p in league_ref["players"]]
    for k in model_ref:
        assert torch.equal(model_res[k], model_ref[k]), k
