"""Ctrl-C saves a checkpoint; the resume command it prints, run verbatim, continues exactly as an
uninterrupted run."""

from __future__ import annotations

import csv
import json
import os
import shlex
import signal
import subprocess
import sys
import time

import psutil
import pytest
import torch

from tests.entry.stride_process import STRIDE

pytestmark = pytest.mark.timeout(240)

CMD = [*STRIDE, "-m", "serial", "-c", "cartpole_dqn_long_config.py", "-s", "1", "--no-progress"]
# the zoo's CartPole DQN, never stopping on its evaluations and evaluating often: a long enough run to interrupt
LONG_CONFIG = """
import copy
from stride.zoo.cartpole.config.cartpole_dqn_config import main_config as zoo, create_config
main_config = copy.deepcopy(zoo)
main_config["env"]["stop_value"] = 1e9
main_config["policy"]["eval"] = dict(evaluator=dict(eval_freq_envstep=200, confirm_episode=0))
"""


def _final_params(exp_dir: str, train_iter: int) -> dict:
    state = torch.load(os.path.join(exp_dir, "ckpt", f"iteration_{train_iter}.pth.tar"), weights_only=True)
    return state["policy"]["model"]


def test_ctrl_c_saves_and_resume_matches_uninterrupted(tmp_path):
    total = 800
    (tmp_path / "cartpole_dqn_long_config.py").write_text(LONG_CONFIG)
    # reference: uninterrupted
    ref = subprocess.run(CMD + ["--train-iter", str(total), "--exp-name", "ref"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=200)
    assert ref.returncode == 0, ref.stderr
    ref_result = json.loads((tmp_path / "ref" / "result.json").read_text())
    final = ref_result["train_iter"]  # total, or earlier if the stop value was reached first

    # interrupted: SIGINT once training is under way
    proc = subprocess.Popen(CMD + ["--train-iter", str(total), "--exp-name", "run"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = tmp_path / "run" / "log" / "learner.txt"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if (tmp_path / "run" / "progress.csv").exists() and len((tmp_path / "run" / "progress.csv").read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "run ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupt received" in err
    printed = [line for line in out.splitlines() if line.startswith("stride: resume with: ")]
    assert len(printed) == 1, out
    command = shlex.split(printed[0][len("stride: resume with: "):])
    assert command == ["stride", "-m", "serial", "--resume", "run", "--train-iter", str(total)]
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["interrupted"] is True and 0 < result["train_iter"] < final
    assert not [c for c in psutil.Process().children(recursive=True) if c.pid == proc.pid]
    assert not list((tmp_path / "run" / "ckpt").glob("*.tmp*"))
    del log

    # the printed command, verbatim: resumes to the same total
    res = subprocess.run([sys.executable, "-m", *command], cwd=tmp_path, capture_output=True, text=True, timeout=200)
    assert res.returncode == 0, res.stderr
    resumed = json.loads((tmp_path / "run" / "result.json").read_text())
    assert resumed["train_iter"] == final and resumed["env_step"] == ref_result["env_step"]
    assert resumed["stop"] == ref_result["stop"]
    # the clocks go on from the checkpoint's: the whole run is counted, not only the resumed process
    assert resumed["train_cpu_seconds"] > result["train_cpu_seconds"] and resumed["wall_seconds"] > result["wall_seconds"]
    with open(tmp_path / "run" / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    for key in ("train_cpu_seconds", "wall_seconds"):
        column = [float(r[key]) for r in rows]
        assert column == sorted(column), f"{key} went back at the resume: {column}"
    a, b = _final_params(str(tmp_path / "ref"), final), _final_params(str(tmp_path / "run"), final)
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a), "resumed run diverged from the uninterrupted one"


def test_resume_errors_are_one_line(tmp_path):
    res = subprocess.run([*STRIDE, "--resume", "nowhere"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "nowhere" in res.stderr and "Traceback" not in res.stderr
