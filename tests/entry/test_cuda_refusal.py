"""``policy.cuda=True`` where torch finds no CUDA device (issue 28): the run used to train on the CPU
and record ``"cuda": true``; now the command refuses it in one line, exit 2, before any folder is
made. (``tests/entry/test_cuda.py`` covers the same flag where a GPU is present.)"""

from __future__ import annotations

import os
import subprocess

import pytest
import torch

from tests.entry.stride_process import STRIDE

pytestmark = [pytest.mark.skipif(torch.cuda.is_available(), reason="refused only where torch finds no CUDA device"),
              pytest.mark.timeout(120)]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARALLEL = os.path.join(ROOT, "stride", "zoo", "cartpole", "config", "parallel", "cartpole_dqn_config.py")


@pytest.mark.parametrize("argv", [
    ["-m", "serial", "-e", "cartpole", "-p", "dqn", "--env-step", "200"],
    ["-m", "offline", "-e", "cartpole", "-p", "bc", "--train-iter", "20", "--set", "policy.collect.data_path=nowhere"],
    ["-m", "parallel", "-c", PARALLEL, "--env-step", "200"],
], ids=["serial", "offline", "parallel"])
def test_cuda_without_a_device_is_refused_in_one_line_before_any_folder(tmp_path, argv):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([*STRIDE, *argv, "-s", "0", "--no-progress",
                          "--set", "policy.cuda=True"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=100)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2, out.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith(
        "stride: error: policy.cuda=True but torch finds no CUDA device (torch.cuda.is_available() is False)"), out.stderr
    assert "policy.cuda=False" in lines[0]
    assert os.listdir(tmp_path) == []


def test_tune_with_cuda_without_a_device_is_one_line_before_any_trial(tmp_path):
    """-m tune checks the base config once: one line, exit 2, no trial (was a traceback per trial)."""
    r = subprocess.run([*STRIDE, "-m", "tune", "-e", "cartpole", "-p", "dqn", "--trials", "2",
                        "--set", "policy.cuda=True"], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "policy.cuda=True" in r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert list(tmp_path.iterdir()) == []
