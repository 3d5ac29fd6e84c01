"""A run that could not start leaves no experiment folder (issue 28, item 7): GAIL / SQIL / R2D3 / BC
with a bad or corrupt dataset, GAIL without Minari, Ray that did not start (-m parallel, -m league
--workers, -m tune --workers) -- so the corrected rerun gets the plain name. The mechanism
(:func:`stride.config.compile.provisional_exp_dirs`) removes only folders it created, and keeps them
once the run is built; a resumed run's or an existing folder is never removed."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

import pytest

from stride.config import compile as exp_dirs
from stride.entry.cli import main
from stride.utils.errors import StrideError
from tests.entry.stride_process import STRIDE

pytestmark = pytest.mark.timeout(240)


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stride: error: "), err
    return lines[0]


# ---- the mechanism ---------------------------------------------------------------------------------
def test_a_failed_build_removes_the_folders_it_made_and_only_those(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    (old / "user.txt").write_text("mine")
    with pytest.raises(RuntimeError), exp_dirs.provisional_exp_dirs():
        made = exp_dirs.make_exp_dir(str(tmp_path / "a" / "b" / "run"))  # two new parents
        (tmp_path / "a" / "b" / "run" / "log").mkdir()
        assert exp_dirs.make_exp_dir(str(old), renew=False) == str(old)  # existed: never removed
        raise RuntimeError("the dataset is missing")
    assert made == str(tmp_path / "a" / "b" / "run")
    assert sorted(os.listdir(tmp_path)) == ["old"] and (old / "user.txt").read_text() == "mine"


def test_a_built_run_keeps_its_folder_whatever_happens_next(tmp_path):
    with pytest.raises(KeyboardInterrupt), exp_dirs.provisional_exp_dirs():
        first = exp_dirs.make_exp_dir(str(tmp_path / "run"))
        exp_dirs.keep_exp_dirs()
        raise KeyboardInterrupt
    assert os.path.isdir(first)
    with pytest.raises(RuntimeError), exp_dirs.provisional_exp_dirs():  # a second seed that failed to build
        second = exp_dirs.make_exp_dir(str(tmp_path / "run"))
        with exp_dirs.provisional_exp_dirs():  # an inner run (a tuning trial) keeps its own
            exp_dirs.make_exp_dir(str(tmp_path / "trial"))
            exp_dirs.keep_exp_dirs()
        raise RuntimeError
    assert second == str(tmp_path / "run_1") and sorted(os.listdir(tmp_path)) == ["run", "trial"]
    assert exp_dirs.make_exp_dir(str(tmp_path / "x")) and os.path.isdir(tmp_path / "x")  # outside a block: as before


# ---- the runs --------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["-e", "cartpole", "-p", "dqn_gail", "--set", "reward_model.data_path=no_such_demo"],
    ["-e", "cartpole", "-p", "sqil", "--set", "policy.collect.data_path=no_such_demo"],
    ["-e", "cartpole_pomdp", "-p", "r2d3", "--set", "policy.collect.data_path=no_such_demo"],
], ids=["gail", "sqil", "r2d3"])
def test_a_bad_dataset_leaves_no_folder(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial", *argv, "--env-step", "200", "--no-progress"]) == 2
    assert "no_such_demo" in _one_error_line(capsys.readouterr().err)
    assert os.listdir(tmp_path) == []


def test_gail_without_minari_leaves_no_folder(tmp_path):
    """A real process in which ``import minari`` fails (as where the extra is not installed). The folder
    is then as before the run, so the corrected rerun gets the plain name: docs/pipelines/
    demonstrations.md runs that command (GAIL on a dataset, a real process) and tests/docs checks its
    folder is ``cartpole_dqn_gail_seed0``."""
    from tests.zoo.demo_helpers import random_demo

    random_demo("CartPole-v1", str(tmp_path / "demo"))
    args = ["-m", "serial", "-e", "cartpole", "-p", "dqn_gail", "--set", f"reward_model.data_path={tmp_path / 'demo'}",
            "--env-step", "64", "--no-progress"]
    no_minari = "import sys; sys.modules['minari'] = None; from stride.entry.cli import main; sys.exit(main())"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-c", no_minari, *args], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=180)
    assert p.returncode == 1 and "[minari]" in _one_error_line(p.stderr), p.stderr  # the extra's install line
    assert sorted(os.listdir(tmp_path)) == ["demo"]


@contextlib.contextmanager
def _ray_that_does_not_start(num_cpus=None, run_dir=None):
    raise StrideError("the local Ray instance at 127.0.0.1:1 did not answer within 120 s")
    yield {}  # pragma: no cover


@pytest.mark.parametrize("argv, module", [
    (["-m", "parallel", "-c", "stride/zoo/cartpole/config/parallel/cartpole_dqn_config.py",
     ], "stride.entry.parallel.pipeline"),
    (["-m", "league", "-c", "stride/zoo/pettingzoo/config/tictactoe_league_config.py", "--workers", "2"],
     "stride.entry.parallel.league"),
    (["-m", "tune", "-e", "cartpole", "-p", "dqn", "--trials", "2", "--workers", "2"], "stride.entry.parallel.cluster"),
], ids=["parallel", "league", "tune"])
def test_ray_that_does_not_start_leaves_no_folder(argv, module, capsys, tmp_path, monkeypatch):
    pytest.importorskip("ray")
    import importlib

    if "-c" in argv:
        argv = [os.path.abspath(a) if a.endswith(".py") else a for a in argv]
    monkeypatch.setattr(importlib.import_module(module), "local_ray", _ray_that_does_not_start)
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--env-step", "200", "--no-progress"]) != 0
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[I ")]  # Optuna's info
    assert "did not answer" in _one_error_line("\n".join(err))
    assert os.listdir(tmp_path) == []


# ---- a corrupt dataset (item 8): the file and the cause in one line, exit 2, no folder ---------------
@pytest.fixture(scope="module")
def truncated_demo(tmp_path_factory) -> str:
    from tests.zoo.demo_helpers import random_demo

    out = random_demo("CartPole-v1", str(tmp_path_factory.mktemp("demos") / "truncated"))
    data = os.path.join(out, "data", "main_data.hdf5")
    with open(data, "r+b") as f:
        f.truncate(os.path.getsize(data) // 2)
    return out


@pytest.mark.parametrize("argv", [
    ["-m", "serial", "-e", "cartpole", "-p", "dqn_gail", "--set", "reward_model.data_path={}", "--env-step", "200"],
    ["-m", "offline", "-e", "cartpole", "-p", "bc", "--set", "policy.collect.data_path={}", "--train-iter", "20"],
    ["-m", "serial", "-e", "cartpole", "-p", "sqil", "--set", "policy.collect.data_path={}", "--env-step", "200"],
    ["-m", "serial", "-e", "cartpole_pomdp", "-p", "r2d3", "--set", "policy.collect.data_path={}", "--env-step", "200"],
], ids=["gail", "bc", "sqil", "r2d3"])
def test_a_truncated_dataset_is_one_line_exit_2_and_leaves_no_folder(argv, truncated_demo, capsys, tmp_path,
                                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([a.format(truncated_demo) for a in argv] + ["--no-progress"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"cannot read '{os.path.join(truncated_demo, 'data', 'main_data.hdf5')}': OSError: Unable to " \
           "synchronously open file (truncated file" in line
    assert os.listdir(tmp_path) == []


def test_the_command_on_a_truncated_dataset(truncated_demo, tmp_path):
    """A real process: ``-m offline`` (BC) on a truncated dataset."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([*STRIDE, "-m", "offline", "-e", "cartpole", "-p", "bc", "--set",
                        f"policy.collect.data_path={truncated_demo}", "--train-iter", "20", "--no-progress"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"demonstration dataset '{truncated_demo}': cannot read" in _one_error_line(p.stderr)
    assert os.listdir(tmp_path) == []
