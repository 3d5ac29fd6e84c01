"""The command under a careful user's mistakes and signals (issue 13): bad flag values, files that
are not configs, names and folders the file system refuses, a full disk, unsafe or broken
checkpoints and saved configs -- each one line, exit 2 (usage) or 1 (the machine), no traceback,
no ``.tmp`` left; resume keeps the run's limits, says when there is nothing to resume, SIGTERM saves
like SIGINT; folders are created atomically; progress lines appear where stdout is no terminal."""

from __future__ import annotations

import errno
import glob
import io
import json
import multiprocessing as mp
import os
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest
import torch

from stride.config.compile import make_exp_dir
from stride.entry.cli import main
from stride.entry.progress import ProgressBar
from tests.entry.stride_process import STRIDE

pytestmark = pytest.mark.timeout(240)

LONG_CONFIG = """
import copy
from stride.zoo.cartpole.config.cartpole_dqn_config import main_config as zoo, create_config
main_config = copy.deepcopy(zoo)
main_config["exp_name"] = "long"
main_config["env"]["stop_value"] = 1e9  # never stops on an evaluation: only limits and signals end it
main_config["policy"]["eval"] = dict(evaluator=dict(eval_freq_envstep=200, confirm_episode=0))
"""


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stride: error: "), err
    assert "Traceback" not in err
    return lines[0]


def _tmp_files(root) -> list:
    return glob.glob(os.path.join(str(root), "**", "*.tmp*"), recursive=True)


# ---- flags -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, shown", [
    (["--env-step", "nan"], "'nan'"), (["--env-step", "inf"], "'inf'"), (["--env-step", "-5"], "'-5'"),
    (["--env-step", "abc"], "'abc'"), (["--env-step", "2.5"], "'2.5'"), (["--train-iter", "0"], "'0'"),
    (["-s", "-1"], "-1"), (["-s", str(2**32)], str(2**32)), (["-s", "1.5"], "'1.5'"),
    (["--set", "policy.learn.learning_rate"], "KEY=VALUE"), (["--episodes", "0"], "'0'"),
])
def test_bad_flag_values_are_one_line(argv, shown, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial", "-e", "cartpole", "-p", "dqn", *argv]) == 2
    assert shown in _one_error_line(capsys.readouterr().err)
    assert os.listdir(tmp_path) == []


def test_a_bad_flag_from_the_shell_is_one_line_without_traceback(tmp_path):
    r = subprocess.run([*STRIDE, "-m", "serial", "-e", "cartpole", "-p", "dqn",
                        "--env-step", "nan"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--env-step" in _one_error_line(r.stderr)


@pytest.mark.parametrize("name, text, shown", [
    ("notes.txt", "some notes\n", "is not valid Python (line 1"),
    ("broken_config.py", "main_config = dict(\n", "is not valid Python (line 1"),
    ("empty_config.py", "x = 1\n", "must define main_config and create_config"),
    ("list_config.py", "main_config = [1]\ncreate_config = {}\n", "main_config must be a dict"),
    ("raises_config.py", "raise RuntimeError('no\\nway')\n", "failed to run: RuntimeError: no way"),
])
def test_files_that_are_not_configs_are_one_line(name, text, shown, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text)
    assert main(["-m", "serial", "-c", name]) == 2
    assert shown in _one_error_line(capsys.readouterr().err)
    assert os.listdir(tmp_path) == [name]
    assert main(["-m", "serial", "-c", str(tmp_path)]) == 2  # a folder
    assert "is not a file" in _one_error_line(capsys.readouterr().err)


# ---- the file system refuses -----------------------------------------------------------------------
def test_a_name_too_long_for_the_file_system_is_bad_usage(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial", "-e", "cartpole", "-p", "dqn", "--exp-name", "x" * 300, "--no-progress"]) == 2
    assert "File name too long" in _one_error_line(capsys.readouterr().err)
    assert os.listdir(tmp_path) == []


def test_a_read_only_folder_is_one_line_exit_1(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)

    monkeypatch.setattr(os, "mkdir", read_only)
    assert main(["-m", "serial", "-e", "cartpole", "-p", "dqn", "--no-progress"]) == 1
    assert "Read-only file system" in _one_error_line(capsys.readouterr().err)


def test_a_full_disk_leaves_no_half_written_file(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    real_save = torch.save

    def save_then_disk_full(obj, f, *args, **kwargs):  # what torch.save does on a full disk
        real_save({"partial": torch.zeros(100)}, f)
        try:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        except OSError:
            raise RuntimeError("[enforce fail at inline_container.cc] unexpected pos")  # noqa: B904

    monkeypatch.setattr(torch, "save", save_then_disk_full)
    assert main(["-m", "serial", "-e", "cartpole", "-p", "dqn", "--no-progress", "--env-step", "2000"]) == 1
    line = _one_error_line(capsys.readouterr().err)
    assert "No space left on device" in line and "ckpt" in line
    assert _tmp_files(tmp_path) == []
    assert not glob.glob(str(tmp_path / "*" / "ckpt" / "*.pth.tar"))  # nothing half-written under the real name


# ---- broken checkpoints and saved configs ----------------------------------------------------------
@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("finished")
    r = subprocess.run([*STRIDE, "-m", "serial", "-e", "cartpole", "-p", "dqn",
                        "--env-step", "600", "--exp-name", "done", "--no-progress"],
                       cwd=d, capture_output=True, text=True, timeout=200)
    assert r.returncode == 0, r.stderr
    return d / "done"


def test_unsafe_or_broken_checkpoints_are_refused_in_one_line(finished_run, capsys, tmp_path):
    ckpt = finished_run / "ckpt"
    latest = (ckpt / "ckpt_latest.txt").read_text().strip()
    cases = {"truncated": (ckpt / latest).read_bytes()[:500], "empty": b""}
    for name, data in cases.items():
        (ckpt / f"{name}.pth.tar").write_bytes(data)
    import numpy as np

    torch.save({"policy": {"w": np.zeros(3)}, "train_iter": 1}, ckpt / "numpy.pth.tar")  # needs pickle
    torch.save({"weights": torch.zeros(2)}, ckpt / "foreign.pth.tar")  # safe, but not Stride's
    expected = {"truncated": "truncated or not a checkpoint", "empty": "truncated or not a checkpoint",
                "numpy": "holds objects a safe load refuses", "foreign": "is not a Stride checkpoint"}
    for name, words in expected.items():
        for argv in (["-m", "eval", "--load", str(ckpt / f"{name}.pth.tar")],
                     ["-m", "serial", "--resume", str(ckpt / f"{name}.pth.tar")]):
            assert main(argv) == 2
            line = _one_error_line(capsys.readouterr().err)
            assert words in line and "weights_only" not in line, line


@pytest.mark.parametrize("edit, shown", [
    (lambda text: text[: len(text) // 2], "is not valid JSON at line"),
    (lambda text: text.replace('"batch_size"', '"batch_sise"'), "unknown config key 'policy.learn.batch_sise'"),
    (lambda text: text.replace('"learning_rate": 0.003', '"learning_rate": -1'), "'policy.learn.learning_rate' must be"),
    (lambda text: "[1, 2]", "does not hold a config"),
])
def test_a_hand_edited_or_truncated_saved_config_is_refused(finished_run, edit, shown, capsys, tmp_path):
    import shutil

    exp = tmp_path / "copy"
    shutil.copytree(finished_run, exp)
    saved = exp / "total_config.json"
    saved.write_text(edit(saved.read_text()))
    for argv in (["-m", "serial", "--resume", str(exp)], ["-m", "eval", "--load", str(exp)]):
        assert main(argv) == 2
        assert shown in _one_error_line(capsys.readouterr().err)


# ---- resume ------------------------------------------------------------------------------------------
def _start(argv, cwd) -> subprocess.Popen:
    return subprocess.Popen([*STRIDE, *argv], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _interrupt_after_rows(proc: subprocess.Popen, progress_csv, sig: int, rows: int = 2) -> tuple:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if progress_csv.exists() and len(progress_csv.read_text().splitlines()) > rows:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    proc.send_signal(sig)
    return proc.communicate(timeout=120)


SLOW_RESET_ENV = """
import os, time, gymnasium
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

class SlowResetCartPole(CartPoleEnv):
    def reset(self, **kwargs):
        with open(os.environ["STRIDE_TEST_RESETS"], "a") as f:
            f.write(f"{os.getpid()}\\n")
        time.sleep(120)  # a slow env launch: the run is still being built when the signal comes
        return super().reset(**kwargs)

gymnasium.register(id="SlowResetCartPole-v1", entry_point=SlowResetCartPole, max_episode_steps=500)
"""


@pytest.mark.parametrize("manager", ["base", "subprocess"])
def test_sigterm_while_the_run_is_built_leaves_no_folder_and_no_env_process(manager, tmp_path):
    """SIGTERM's default action ended the process on the spot: a scheduler's time limit during the
    envs' launch left a folder with a config and no checkpoint (and the next run a suffixed name).
    Outside the loop SIGTERM now acts as Ctrl-C: the build's folder is removed, its env processes
    closed, one line, exit 143."""
    (tmp_path / "slow_env_pkg.py").write_text(SLOW_RESET_ENV)
    resets = tmp_path / "resets.txt"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
               STRIDE_TEST_RESETS=str(resets))
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.Popen([*STRIDE, "-m", "serial", "-e", "cartpole", "-p", "dqn",
                             "--set", "env.env_id=slow_env_pkg:SlowResetCartPole-v1",
                             "--set", f"env.manager.type={manager}", "--no-progress"],
                            cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not resets.exists():
        time.sleep(0.05)
    assert proc.poll() is None and resets.exists(), "no env was reset"
    assert os.listdir(work) == ["cartpole_dqn_seed0"]  # the run's folder exists while it is built
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "stride: aborted (SIGTERM)" and "Traceback" not in err
    assert os.listdir(work) == []  # nothing half-made left
    for pid in {int(line) for line in resets.read_text().split()} - {proc.pid}:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _running(pid):
            time.sleep(0.05)
        assert not _running(pid), f"env process {pid} outlived the run"


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow  # ~29 s: outside CI's 25 minutes (test_serial_resume, test_run_rules and test_cli_printed cover SIGTERM / Ctrl-C and resume in CI)
def test_resume_keeps_the_limits_sigterm_saves_and_a_finished_run_is_not_trained_again(tmp_path):
    (tmp_path / "long_config.py").write_text(LONG_CONFIG)
    name, total = "my run", 1200
    csv = tmp_path / name / "progress.csv"
    # SIGTERM, like a cluster's time limit: checkpoint, exit 143, a resume command with the limit, quoted
    proc = _start(["-m", "serial", "-c", "long_config.py", "--train-iter", str(total), "--exp-name", name,
                   "--no-progress"], tmp_path)
    out, err = _interrupt_after_rows(proc, csv, signal.SIGTERM)
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "SIGTERM" in err
    command = re.search(r"resume with: (.*)", out).group(1)
    assert shlex.split(command) == ["stride", "-m", "serial", "--resume", name, "--train-iter", str(total)]
    first = json.loads((tmp_path / name / "result.json").read_text())
    assert first["interrupted"] and first["signal"] == "SIGTERM" and 0 < first["train_iter"] < total
    assert _tmp_files(tmp_path) == []
    # resumed without the limit and interrupted again (SIGINT): still a non-zero exit
    rows = len(csv.read_text().splitlines())
    proc = _start(["-m", "serial", "--resume", name, "--no-progress"], tmp_path)
    out, err = _interrupt_after_rows(proc, csv, signal.SIGINT, rows + 1)
    assert proc.returncode == 130, err
    second = json.loads((tmp_path / name / "result.json").read_text())
    assert second["interrupted"] and first["train_iter"] < second["train_iter"] < total
    # resumed again without the limit: it stops at the limit the run was started with
    done = subprocess.run([*STRIDE, "-m", "serial", "--resume", name, "--no-progress"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=200)
    assert done.returncode == 0, done.stderr
    final = json.loads((tmp_path / name / "result.json").read_text())
    assert final["train_iter"] == total and not final["interrupted"]
    # a finished run: says so, exits 0, trains nothing and rewrites nothing
    before = (tmp_path / name / "result.json").read_bytes()
    ckpts = sorted(os.listdir(tmp_path / name / "ckpt"))
    again = subprocess.run([*STRIDE, "-m", "serial", "--resume", name], cwd=tmp_path,
                           capture_output=True, text=True, timeout=200)
    assert again.returncode == 0, again.stderr
    assert "already finished" in again.stdout and "nothing to resume" in again.stdout
    assert (tmp_path / name / "result.json").read_bytes() == before
    assert sorted(os.listdir(tmp_path / name / "ckpt")) == ckpts


def test_set_is_refused_on_resume(finished_run, capsys):
    assert main(["-m", "serial", "--resume", str(finished_run), "--set", "policy.learn.batch_size=32"]) == 2
    assert "--set cannot change a resumed run" in _one_error_line(capsys.readouterr().err)


# ---- experiment folders ------------------------------------------------------------------------------
def test_a_folder_created_in_between_is_never_shared(tmp_path, monkeypatch):
    # another run creates "exp" right after this one looked for it: creation itself must be the test
    (tmp_path / "exp").mkdir()
    monkeypatch.setattr(os.path, "exists", lambda path: False)
    assert make_exp_dir(str(tmp_path / "exp")) == str(tmp_path / "exp_1")


def _make(args):
    path, barrier = args
    barrier.wait()
    return make_exp_dir(path)


def test_runs_started_at_once_with_one_name_get_distinct_folders(tmp_path):
    ctx = mp.get_context("fork")
    n = 6
    with ctx.Manager() as manager:
        barrier = manager.Barrier(n)
        with ctx.Pool(n) as pool:
            made = pool.map(_make, [(str(tmp_path / "same"), barrier)] * n)
    assert len(set(made)) == n


def test_rerunning_a_saved_config_keeps_one_seed_suffix(finished_run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    saved = str(finished_run / "formatted_total_config.py")
    assert main(["-m", "serial", "-c", saved, "-s", "1", "--env-step", "100", "--no-progress"]) == 0
    assert main(["-m", "serial", "-c", saved, "-s", "1", "--env-step", "100", "--no-progress"]) == 0
    assert sorted(os.listdir(tmp_path)) == ["done_seed1", "done_seed1_1"]
    again = str(tmp_path / "done_seed1" / "formatted_total_config.py")
    assert main(["-m", "serial", "-c", again, "-s", "2", "--env-step", "100", "--no-progress"]) == 0
    assert "done_seed2" in os.listdir(tmp_path) and not glob.glob(str(tmp_path / "*seed1_seed*"))


# ---- --set -----------------------------------------------------------------------------------------
def test_set_overrides_are_checked_and_recorded(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["-m", "serial", "-e", "cartpole", "-p", "dqn", "--env-step", "100", "--no-progress", "--exp-name", "ov",
            "--set", "policy.learn.learning_rate=2e-3", "--set", "policy.model.encoder_hidden_size_list=[32, 32]",
            "--set", "policy.learn.loss_type=huber"]
    assert main(argv) == 0
    saved = json.loads((tmp_path / "ov" / "total_config.json").read_text())
    assert saved["policy"]["learn"]["learning_rate"] == 2e-3 and saved["policy"]["learn"]["loss_type"] == "huber"
    assert saved["policy"]["model"]["encoder_hidden_size_list"] == [32, 32]
    formatted = (tmp_path / "ov" / "formatted_total_config.py").read_text()
    assert "learning_rate=0.002" in formatted and "loss_type='huber'" in formatted
    for bad, shown in (("policy.learn.lerning_rate=1", "did you mean 'policy.learn.learning_rate'"),
                       ("policy.learn.batch_size=0", "'policy.learn.batch_size' must be an integer"),
                       ("policy.learn.batch_size.x=1", "'batch_size' holds 64, not a section")):
        assert main(["-m", "serial", "-e", "cartpole", "-p", "dqn", "--set", bad]) == 2
        assert shown in _one_error_line(capsys.readouterr().err)


# ---- progress ------------------------------------------------------------------------------------
class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_lines_where_stdout_is_not_a_terminal():
    out = io.StringIO()
    bar = ProgressBar(True, total=float("inf"), period=0.0, stream=out)
    bar.update(1000, 250, None)
    bar.update(3000, 750, 195.5)
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert re.fullmatch(r"stride: env_step=3000 train_iter=750 \d+ env steps/s last eval=195\.50", lines[1])
    tty = _Tty()
    ProgressBar(True, total=float("inf"), period=0.0, stream=tty).update(1000, 1, None)  # a terminal: the bar's job
    quiet = io.StringIO()
    ProgressBar(False, total=float("inf"), period=0.0, stream=quiet).update(1000, 1, None)  # --no-progress
    assert tty.getvalue() == "" and quiet.getvalue() == ""


def test_a_run_writing_to_a_file_prints_progress_lines(tmp_path):
    """A real run with stdout sent to a pipe (period shortened through the pipeline's own bar)."""
    (tmp_path / "long_config.py").write_text(LONG_CONFIG)
    code = ("import sys; import stride.entry.progress as p; "
            "init = p.ProgressBar.__init__; "
            "p.ProgressBar.__init__ = lambda self, *a, **k: init(self, *a, **dict(k, period=0.5)); "
            "from stride.entry.cli import main; sys.exit(main(sys.argv[1:]))")
    r = subprocess.run([sys.executable, "-c", code, "-m", "serial", "-c", "long_config.py", "--env-step", "6000"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=200)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("stride: env_step=")]
    assert lines and all(re.search(r"train_iter=\d+ \d+ env steps/s last eval=", ln) for ln in lines)
