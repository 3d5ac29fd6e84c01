"""The league on Ray (``stride -m league --workers N``): the collector role plays the driver's
league in-process (no Ray, in CI); (slow, Ray) a short run fills the payoff and the snapshots,
checkpoints them and leaves no process, also when it fails; a collector SIGKILLed mid-run is
replaced with the league intact, Ctrl-C checkpoints it and ``--resume`` goes on from its snapshots
and payoff."""

from __future__ import annotations

import copy
import csv
import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
import torch

pytest.importorskip("pettingzoo")
pytest.importorskip("trueskill")

from stride.config import compile_config  # noqa: E402
from stride.entry import league_pipeline  # noqa: E402
from stride.entry.parallel.league import LeagueCollectorRole, LeagueLearnerRole  # noqa: E402
from stride.entry.parallel.roles import CollectorRole  # noqa: E402
from stride.league import League  # noqa: E402
from stride.utils.errors import ConfigError  # noqa: E402
from tests.processes import still_alive  # noqa: E402
from stride.utils.registry import import_components  # noqa: E402
from stride.zoo.pettingzoo.config.tictactoe_league_config import create_config, main_config  # noqa: E402
from tests.entry.stride_process import STRIDE  # noqa: E402

SEATS = ("player_1", "player_2")


def _small():
    m = copy.deepcopy(main_config)
    m["env"]["collector_env_num"] = 2
    m["policy"]["model"]["encoder_hidden_size_list"] = [32, 32]
    m["policy"]["random_collect_size"] = 32
    m["policy"]["learn"]["batch_size"] = 16
    m["policy"]["learn"]["learner"] = dict(hook=dict(save_ckpt_after_iter=10_000))
    m["league"].update(snapshot_every=5, eval_episode=2, stop_max_loss_rate=None)
    return m


def _ckpt(exp):
    with open(os.path.join(exp, "ckpt", "ckpt_latest.txt")) as f:
        return torch.load(os.path.join(exp, "ckpt", f.read().strip()), weights_only=True)


def test_collector_role_plays_the_drivers_league_and_returns_its_games(tmp_path):
    import_components()
    main = _small()
    main["league"]["branch_probs"] = dict(pfsp=0.0, uniform=1.0, fixed=0.0, sp=0.0)  # every game vs a frozen player
    cfg = compile_config(main, create_cfg=copy.deepcopy(create_config), seed=0, exp_name=str(tmp_path / "exp"),
                         save_cfg=False)
    learner = LeagueLearnerRole(cfg)
    driver = League(cfg.league)
    driver.snapshot(learner.league_snapshot(), 7)
    collector = LeagueCollectorRole(cfg, "collector0", 0)
    games = []
    for k in range(6):
        meta, data = collector.collect(None, 0, 0, 0, driver.state_dict() if k == 0 else None, 1)
        games += meta["games"]
    assert len(data) == 10 and games and None not in games  # no self-play with these branch probabilities
    assert {g[0] for g in games} <= {"random", "win_block", "main_7"} and "main_7" in {g[0] for g in games}
    for game in games:
        driver.add_game(game)
    assert driver.games["main"] == len(games) and driver.games["main_7"] > 0
    plain = compile_config(copy.deepcopy(main), create_cfg=copy.deepcopy(create_config), seed=0, save_cfg=False,
                           exp_name=str(tmp_path / "p"))
    plain.league = None
    with pytest.raises(ConfigError, match="no league section"):
        LeagueCollectorRole(plain, "collector1", 1)
    with pytest.raises(TypeError):  # the generic collector takes no league state: the league is its hook's
        CollectorRole(plain, "collector2", 2).collect(None, 0, 0, 0, driver.state_dict(), 1)


def _in_subprocess(tmp_path, body: str) -> dict:
    """Run ``body`` (it sets ``out``, a dict) in a fresh interpreter: a local Ray instance starts
    only where ray was not imported yet, so each run gets its own process (as in test_pipeline);
    ``out['left']``: the processes the run left behind (Ray, its workers, the watchdog)."""
    script = tmp_path / "run_league.py"
    script.write_text(
        "import json, psutil\n"
        "from tests.entry.parallel.test_league import _small\n"
        "from stride.entry import league_pipeline\n"
        "from stride.zoo.pettingzoo.config.tictactoe_league_config import create_config\n"
        f"exp = {str(tmp_path / 'run')!r}\n"
        "out = {}\n" + body +
        "out['left'] = [' '.join(p.cmdline())[:80] for p in psutil.Process().children(recursive=True)]\n"
        "print('RESULT ' + json.dumps(out, default=str))\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=280, env=env)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


@pytest.mark.slow  # Ray's start, then 12-20 s of actor start-up on this 2-core machine under load 8
def test_ray_league_fills_payoff_and_snapshots_and_leaves_nothing(tmp_path):
    shm_before = set(os.listdir("/dev/shm"))
    out = _in_subprocess(tmp_path, "out['result'] = league_pipeline([_small(), create_config], seed=0, max_env_step=300, "
                                   "exp_name=exp, progress=False, workers=2).result\n")
    r, exp = out["result"], str(tmp_path / "run")
    assert out["left"] == []  # Ray, its workers and the watchdog are gone
    assert set(os.listdir("/dev/shm")) <= shm_before
    assert r["workers"] == 2 and r["env_step"] >= 300 and r["snapshots"] >= 2 and r["games_recorded"] > 0
    assert r["collector_restarts"] == [] and r["duplicates"] == 0 and r["train_cpu_seconds"] > 0
    rows = list(csv.DictReader(open(os.path.join(exp, "league.csv"))))
    assert len(rows) == r["snapshots"]
    for row in rows:
        assert all(sum(int(row[f"{o}_{s}_{k}"]) for k in ("won", "drawn", "lost")) == 2
                   for o in ("random", "win_block") for s in SEATS)
    league = _ckpt(exp)["components"]["league"]  # the final checkpoint holds the league as it ended
    players = [p["player_id"] for p in league["players"]]
    assert players[:3] == ["main", "random", "win_block"] and len(players) == 3 + r["snapshots"]
    assert all(p["weights"] for p in league["players"] if p["kind"] == "historical")
    opponents = {rec[1] for rec in league["payoff"]["records"]}
    assert {"random", "win_block"} <= opponents
    assert league["games"]["main"] + league["sp_games"] == r["games_recorded"]


@pytest.mark.slow
def test_an_error_mid_run_leaves_nothing(tmp_path):
    out = _in_subprocess(tmp_path, (
        "from stride.entry.league_eval import LeagueEvaluation\n"
        "def boom(self, *args, **kwargs):\n"
        "    raise RuntimeError('boom in the evaluation')\n"
        "LeagueEvaluation.evaluate = boom\n"
        "try:\n"
        "    league_pipeline([_small(), create_config], seed=0, max_env_step=300, exp_name=exp, progress=False, workers=2)\n"
        "except RuntimeError as e:\n"
        "    out['error'] = str(e)\n"))
    assert out["error"] == "boom in the evaluation" and out["left"] == []


def test_bad_workers_are_one_line_errors(tmp_path, capsys):
    from stride.entry.cli import main as cli_main

    assert cli_main(["-m", "serial", "-e", "cartpole", "-p", "dqn", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert "--workers is for -m league and -m tune, not -m serial" in err and err.count("\n") == 1
    with pytest.raises(ConfigError, match="workers=0"):
        league_pipeline([_small(), create_config], workers=0, exp_name=str(tmp_path / "x"))
    with pytest.raises(ConfigError, match="model=None"):
        league_pipeline([_small(), create_config], workers=2, model=torch.nn.Linear(1, 1),
                        exp_name=str(tmp_path / "y"))
    with_exploiter = _small()
    with_exploiter["league"]["main_exploiter"] = dict(use=True)
    with pytest.raises(ConfigError, match="serial league only"):  # refused before Ray starts
        league_pipeline([with_exploiter, create_config], workers=2, exp_name=str(tmp_path / "z"))


# ---- the CLI in a subprocess: a collector killed, Ctrl-C, resume -------------------------------------

def _descendants(proc):
    try:
        return psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _collectors(proc):
    found = []
    for p in _descendants(proc):
        try:
            if "CollectorRole" in " ".join(p.cmdline()):
                found.append(p)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            pass
    return found


def _wait(cond, timeout, what, proc):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the run ended (rc {proc.returncode}) while waiting for {what}: {err[-2000:]}")
        time.sleep(0.3)
    proc.kill()
    pytest.fail(f"timed out waiting for {what}")


def _rows(exp):
    path = os.path.join(exp, "league.csv")
    return list(csv.DictReader(open(path))) if os.path.exists(path) else []


@pytest.mark.slow
def test_killed_collector_is_replaced_the_league_kept_then_ctrl_c_and_resume(tmp_path):
    cfg = tmp_path / "cfg.py"
    cfg.write_text(f"main_config = {_small()!r}\ncreate_config = {create_config!r}\n")
    exp = str(tmp_path / "exp")
    cmd = [*STRIDE, "-m", "league", "-c", str(cfg), "-s", "0", "--exp-name", exp,
           "--no-progress", "--env-step", "2000000", "--workers", "2"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _wait(lambda: len(_collectors(proc)) == 2 and len(_rows(exp)) >= 2, 180, "two collectors and 2 snapshots",
              proc)
        assert [p.nice() for p in _collectors(proc)] == [0, 0]  # not Ray's 15: the machine's other work would starve them
        _collectors(proc)[0].send_signal(signal.SIGKILL)
        _wait(lambda: "died" in open(os.path.join(exp, "log", "coordinator.txt")).read(), 60, "the kill reported", proc)
        before = len(_rows(exp))
        _wait(lambda: len(_rows(exp)) >= before + 2, 180, "snapshots after the kill", proc)
        pids = _descendants(proc)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
    assert proc.returncode == 130, err[-2000:]
    result = json.loads(open(os.path.join(exp, "result.json")).read())
    assert result["interrupted"] and len(result["collector_restarts"]) == 1 == err.count("died (")
    # the league lost nothing: every snapshot before and after the kill is a player, the payoff has them
    league = _ckpt(exp)["components"]["league"]
    snapshots = [row["snapshot"] for row in _rows(exp)]
    assert [p["player_id"] for p in league["players"] if p["kind"] == "historical"] == snapshots
    assert result["snapshots"] == len(snapshots) and {rec[1] for rec in league["payoff"]["records"]} & set(snapshots)
    assert still_alive(pids) == []
    # resume: the same league goes on (its snapshots and payoff loaded), on Ray again (system_config.json)
    env_step = result["env_step"] + 300
    done = subprocess.run([*STRIDE, "-m", "league", "--resume", exp, "--env-step", str(env_step),
                           "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    resumed = json.loads(open(os.path.join(exp, "result.json")).read())
    assert resumed["workers"] == 2 and resumed["env_step"] >= env_step and resumed["train_iter"] > result["train_iter"]
    after = [p["player_id"] for p in _ckpt(exp)["components"]["league"]["players"] if p["kind"] == "historical"]
    assert after[:len(snapshots)] == snapshots and len(after) > len(snapshots)
    _check_resumed_league(league, result, _ckpt(exp)["components"], resumed)


def _same(a, b) -> bool:
    """Equal nested states (tensors compared exactly)."""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _check_resumed_league(league: dict, result: dict, final: dict, resumed: dict) -> None:
    """What a Ray league's resume keeps exactly (Ray's arrival order makes the rest differ from an
    uninterrupted run's): the resumed run goes on from the checkpoint's league -- every player with
    the same frozen weights, every payoff pair and game count kept -- every game a batch brought is
    counted once (the league's games, before and after, are the games recorded, which go on from
    the checkpoint's), and no counter goes back."""
    after = final["league"]
    assert league["games"]["main"] + league["sp_games"] == result["games_recorded"]
    assert after["games"]["main"] + after["sp_games"] == resumed["games_recorded"] > result["games_recorded"]
    assert final["league_games"] == {"games_recorded": resumed["games_recorded"]}
    players = {p["player_id"]: p for p in after["players"]}
    for p in league["players"]:
        assert _same(players[p["player_id"]], p), p["player_id"]
        assert after["games"][p["player_id"]] >= league["games"][p["player_id"]]
    assert {tuple(r[:2]) for r in league["payoff"]["records"]} <= {tuple(r[:2]) for r in after["payoff"]["records"]}
    assert after["sp_games"] >= league["sp_games"] and after["last_snapshot_iter"] >= league["last_snapshot_iter"]
    for key in ("batches", "env_step", "train_iter", "snapshots", "train_cpu_seconds", "wall_seconds"):
        assert resumed[key] >= result[key], key
    assert resumed["collector_restarts"] == result["collector_restarts"] and resumed["lost_batches"] >= 1
