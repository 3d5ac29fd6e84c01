"""A run's rules hold in every phase, with real ``stride`` processes: ``--resume`` refuses a run
that another mode made in one line before touching anything (``run.json`` records the mode; older
runs are recognised by their files), and the random warm-up obeys the env-step limit and the
signals as training does."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Any, Dict

import pytest
import torch

from stride.entry import serial_pipeline
from stride.entry import run_state
from stride.utils.errors import ConfigError
from stride.zoo.cartpole.config.cartpole_dqn_config import create_config as dqn_create, main_config as dqn_main
from tests.entry.stride_process import LEAGUE_CONFIG, interrupt_when, printed_command, run_stride

pytestmark = pytest.mark.timeout(240)


def _files(folder: Path) -> Dict[str, bytes]:
    """Every file under ``folder``, by relative path, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _refused(res: subprocess.CompletedProcess, run_mode_text: str, command: str) -> None:
    assert res.returncode == 2, res.stderr
    line = res.stderr.strip()
    assert "\n" not in line and "Traceback" not in line, res.stderr
    assert line.startswith("stride: error: ") and run_mode_text in line and command in line, line


def _small_league() -> Dict[str, Any]:
    namespace: Dict[str, Any] = {}
    exec(LEAGUE_CONFIG, namespace)
    return namespace["main_config"]


def test_resume_refuses_a_league_run_in_another_mode_before_touching_it(tmp_path):
    """The issue's case: ``-m serial --resume <league run> --env-step 25000`` rewrote run.json and
    failed later; now it is one line, and every file of the run is unchanged, byte for byte."""
    pytest.importorskip("pettingzoo")
    pytest.importorskip("trueskill")
    from stride.entry import league_pipeline
    from stride.zoo.pettingzoo.config.tictactoe_league_config import create_config

    league_pipeline([_small_league(), create_config], seed=0, max_env_step=60, exp_name=str(tmp_path / "lg"),
                    progress=False)
    run = tmp_path / "lg"
    before = _files(run)
    res = run_stride(["-m", "serial", "--resume", "lg", "--env-step", "25000", "--no-progress"], tmp_path)
    assert _files(run) == before
    _refused(res, "is a -m league run, not a -m serial run", "resume it with: stride -m league --resume lg")
    assert json.loads((run / "run.json").read_text()) == {"mode": "league", "max_env_step": 60, "max_train_iter": None,
                                                         "workers": 1}
    # a league run made before runs recorded their mode: its total_config.json's league section tells
    (run / "run.json").write_text(json.dumps({"max_env_step": 60, "max_train_iter": None}))
    before = _files(run)
    _refused(run_stride(["-m", "offline", "--resume", "lg", "--no-progress"], tmp_path),
             "is a -m league run, not a -m offline run", "stride -m league --resume lg")
    assert _files(run) == before


def test_resume_refuses_a_serial_run_in_another_mode_and_the_serial_family_resumes_it(tmp_path):
    serial_pipeline([dqn_main, dqn_create], seed=0, max_env_step=64, exp_name=str(tmp_path / "sr"), progress=False)
    run = tmp_path / "sr"
    before = _files(run)
    res = run_stride(["-m", "league", "--resume", "sr", "--env-step", "500", "--no-progress"], tmp_path)
    assert _files(run) == before
    _refused(res, "is a -m serial run, not a -m league run", "resume it with: stride -m serial --resume sr")
    assert json.loads((run / "run.json").read_text()) == {"mode": "serial", "max_env_step": 64, "max_train_iter": None}
    # -m serial_onpolicy runs serial_pipeline too: it may resume a -m serial run (this one already finished)
    same = run_stride(["-m", "serial_onpolicy", "--resume", "sr", "--no-progress"], tmp_path)
    assert same.returncode == 0 and "already finished" in same.stdout, same.stderr
    assert _files(run) == before


def _folder(tmp_path: Path, name: str, config: Dict[str, object], system: Dict[str, object] = None) -> str:
    exp = tmp_path / name
    exp.mkdir()
    (exp / "total_config.json").write_text(json.dumps(config))
    if system is not None:
        (exp / "system_config.json").write_text(json.dumps(system))
    return str(exp)


def test_run_mode_is_recorded_and_inferred_for_older_runs(tmp_path):
    LEAGUE, OFFLINE, PARALLEL, DIST, SERIAL = (getattr(run_state, name) for name in
                                               ("LEAGUE", "OFFLINE", "PARALLEL", "DIST", "SERIAL"))
    record_run, run_mode = getattr(run_state, "record_run"), getattr(run_state, "run_mode")
    check_resume_mode, write_limits = getattr(run_state, "check_resume_mode"), run_state.write_limits
    league = _folder(tmp_path, "league", {"league": {"type": "one_vs_one"}, "policy": {}})
    record_run(league, LEAGUE, 1000, None, workers=2)
    write_limits(league, 2000, None)  # a resume with new limits keeps the mode
    assert run_mode(league) == (LEAGUE, 2) and json.loads(Path(league, "run.json").read_text())["max_env_step"] == 2000
    with pytest.raises(ConfigError, match=r"is a -m league run with --workers 2, not a -m serial run: resume it "
                                          r"with: stride -m league --resume .*league$"):
        check_resume_mode(league, "serial")
    check_resume_mode(league, "league")
    parallel = _folder(tmp_path, PARALLEL, {"policy": {}})
    record_run(parallel, PARALLEL, None, 100)
    with pytest.raises(ConfigError, match=r"is a -m parallel run, not a -m serial run: resume it with: "
                                          r"stride -m parallel --resume .*parallel$"):
        check_resume_mode(parallel, "serial")
    check_resume_mode(parallel, "parallel")
    dist = _folder(tmp_path, DIST, {"policy": {}})
    record_run(dist, DIST, None, 100)
    for mode in ("serial", "parallel"):
        with pytest.raises(ConfigError, match=f"is a -m {DIST} run, not a -m {mode} run: resume it with: "
                                              r"stride -m dist --module coordinator --resume .*dist$"):
            check_resume_mode(dist, mode)
    check_resume_mode(dist, "dist")
    # older runs (run.json without a mode, or none): their files tell
    Path(league, "run.json").write_text(json.dumps({"max_env_step": 1000, "max_train_iter": None}))
    assert run_mode(league) == (LEAGUE, 1)
    ray_league = _folder(tmp_path, "ray_league", {"league": {"type": "one_vs_one"}}, {"collector_num": 3})
    assert run_mode(ray_league) == (LEAGUE, 3)
    assert run_mode(_folder(tmp_path, "parallel_old", {"policy": {}}, {"collector_num": 2})) == (PARALLEL, 1)
    offline = _folder(tmp_path, "bc_old", {"policy": {"type": "bc", "offline": True}})
    assert run_mode(offline) == (OFFLINE, 1)
    with pytest.raises(ConfigError, match="is a -m offline run, not a -m serial run: .*stride -m offline --resume"):
        check_resume_mode(offline, "serial")
    # neither league, Ray nor an offline-only policy: serial, or offline with another policy; either resumes it
    plain = _folder(tmp_path, "dqn_old", {"policy": {"type": "dqn"}})
    assert run_mode(plain) == (None, 1)
    for mode in ("serial", "serial_onpolicy", "offline"):
        check_resume_mode(plain, mode)
    with pytest.raises(ConfigError, match="is a -m serial or -m offline run, not a -m league run"):
        check_resume_mode(plain, "league")
    record_run(plain, SERIAL, None, None)
    Path(plain, "run.json").write_text(json.dumps({"mode": "atari"}))
    with pytest.raises(ConfigError, match="unknown mode 'atari'; valid choices: serial, offline, league"):
        run_mode(plain)


def _result(run: Path) -> Dict[str, object]:
    return json.loads((run / "result.json").read_text())


def test_env_step_limit_bounds_the_random_warm_up(tmp_path):
    """A warm-up of 20,000 random steps under --env-step 3000: the run stops at the limit (one
    collect of 8 at most past it), saying so in one line."""
    res = run_stride(["-m", "serial", "-e", "cartpole", "-p", "dqn", "-s", "0", "--env-step", "3000", "--exp-name", "w",
                   "--set", "policy.random_collect_size=20000", "--no-progress"], tmp_path)
    assert res.returncode == 0, res.stderr
    result = _result(tmp_path / "w")
    assert 3000 <= result["env_step"] <= 3000 + 8 and result["train_iter"] == 0 and not result["interrupted"]
    notes = [line for line in res.stderr.splitlines() if line.startswith("stride: note:")]
    assert len(notes) == 1 and "3000" in notes[0] and "random warm-up of 20000" in notes[0], res.stderr


def test_a_limit_within_the_first_on_policy_collect_says_so(tmp_path, capsys):
    """PPO collects n_sample=256 env steps at once: a limit of 100 takes that one collect, and says so."""
    from stride.zoo.cartpole.config.cartpole_ppo_config import create_config, main_config

    policy = serial_pipeline([main_config, create_config], seed=0, max_env_step=100, exp_name=str(tmp_path / "p"),
                             progress=False)
    assert 100 <= policy.result["env_step"] <= 100 + 256 and policy.result["train_iter"] == 1
    err = capsys.readouterr().err
    assert "stride: note: the env-step limit 100 is less than one collect away (policy.collect.n_sample=256)" in err


def test_signals_during_the_warm_up_checkpoint_and_the_printed_command_resumes(tmp_path):
    """SIGTERM, then SIGINT on the printed resume command, both inside the random warm-up: a
    checkpoint and result.json each time, exit 143 / 130; the printed command then finishes it."""
    limit = 100_000  # a few seconds of random CartPole steps: the signal lands well inside them
    cmd = ["-m", "serial", "-e", "cartpole", "-p", "dqn", "-s", "0", "--env-step", str(limit), "--exp-name", "w",
           "--set", "policy.random_collect_size=1000000", "--no-progress"]
    run = tmp_path / "w"
    env_step = 0
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        res = interrupt_when(cmd, tmp_path, lambda err: any("random warm-up" in line for line in err), sig)
        assert res.returncode == code, (res.stdout, res.stderr)
        assert "Traceback" not in res.stderr and f"interrupt received ({sig.name})" in res.stderr
        result = _result(run)
        assert result["interrupted"] is True and result["signal"] == sig.name
        # stopped inside the warm-up, its env steps never going back; the note comes before the warm-up's
        # first collect, so the first signal may stop the run at env step 0 (an empty warm-up's checkpoint)
        assert env_step <= result["env_step"] < limit and result["train_iter"] == 0, result
        env_step = result["env_step"]
        assert (run / "ckpt" / "ckpt_latest.txt").is_file()
        cmd = printed_command(res.stdout, "stride: resume with: ")[1:] + ["--no-progress"]
        assert cmd == ["-m", "serial", "--resume", "w", "--env-step", str(limit), "--no-progress"]
    done = run_stride(cmd, tmp_path)
    assert done.returncode == 0, done.stderr
    result = _result(run)
    assert limit <= result["env_step"] <= limit + 8 and not result["interrupted"]


def _buffer_and_model(exp: str) -> Dict[str, Any]:
    with open(os.path.join(exp, "ckpt", "ckpt_latest.txt")) as f:
        state = torch.load(os.path.join(exp, "ckpt", f.read().strip()), weights_only=True)
    return state


def _same(a: object, b: object) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def test_a_run_resumed_inside_its_warm_up_equals_an_uninterrupted_one(tmp_path):
    """Stopped by a limit inside the warm-up, then resumed past it: the same random actions, replay
    and weights as a run that never stopped (each warm-up collect is seeded by the seed and env step)."""
    import copy

    main = copy.deepcopy(dqn_main)
    main["policy"]["random_collect_size"] = 600
    main["env"]["stop_value"] = 1e9
    pair = [main, dqn_create]
    ref = serial_pipeline(copy.deepcopy(pair), seed=3, max_env_step=700, exp_name=str(tmp_path / "ref"), progress=False)
    cut = serial_pipeline(copy.deepcopy(pair), seed=3, max_env_step=300, exp_name=str(tmp_path / "cut"), progress=False)
    assert cut.result["train_iter"] == 0 and 300 <= cut.result["env_step"] <= 308
    resumed = serial_pipeline(None, max_env_step=700, resume=str(tmp_path / "cut"), progress=False)
    assert resumed.result["train_iter"] == ref.result["train_iter"] > 0
    assert resumed.result["env_step"] == ref.result["env_step"]
    a, b = _buffer_and_model(str(tmp_path / "ref")), _buffer_and_model(str(tmp_path / "cut"))
    assert _same(a["components"]["buffer"], b["components"]["buffer"])
    assert _same(a["policy"]["model"], b["policy"]["model"])


def test_the_league_warm_up_obeys_the_env_step_limit(tmp_path):
    pytest.importorskip("pettingzoo")
    pytest.importorskip("trueskill")
    from stride.entry import league_pipeline
    from stride.zoo.pettingzoo.config.tictactoe_league_config import create_config

    main = _small_league()
    main["policy"]["random_collect_size"] = 2000
    policy = league_pipeline([main, create_config], seed=0, max_env_step=100, exp_name=str(tmp_path / "lg"),
                             progress=False)
    assert 100 <= policy.result["env_step"] < 2000 and policy.result["train_iter"] == 0


def test_what_an_interrupted_run_prints_is_a_command_the_cli_takes(tmp_path, capsys):
    """Each training mode's note at an interrupt (a resume command; -m dist's: its coordinator's),
    given the limits the mode takes, is taken by the ``stride`` command as printed: it fails here
    only on the missing run folder, never on a flag."""
    from stride.entry.cli import MODES, main

    missing = str(tmp_path / "no such run")
    trains = sorted({mode for modes in run_state.RESUMED_BY.values() for mode in modes} | {"dist"})
    assert set(trains) <= set(MODES)
    for mode in trains:
        takes = MODES[mode].takes
        note = run_state.interrupted_note(mode, missing, 100 if "--env-step" in takes else None,
                                          7 if "--train-iter" in takes else None)
        prefix = "resume with: "
        assert note.startswith(prefix), note
        command = shlex.split(note[len(prefix):])
        assert command[0] == "stride" and missing in command, command
        assert main(command[1:]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and repr(missing) in err and "does not exist" in err, (mode, err)
