"""``stride -m serial ... --set policy.learn.multi_gpu=True`` under torchrun: two learner replicas
(gloo) train together, rank 0 alone writes and reports, both stop together; without a launcher the
command says how to launch and writes nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from stride.entry.serial_entry import serial_pipeline
from stride.utils.errors import ConfigError
from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config
from tests.processes import alive

TORCHRUN = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
ARGS = ["-m", "stride", "-m", "serial", "-e", "cartpole", "-p", "dqn", "-s", "3", "--env-step", "300",
        "--no-progress", "--set", "policy.learn.multi_gpu=True"]


def _env() -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"):
        env.pop(name, None)
    return env


# two replicas training together, rank 0 alone writing and reporting: docs/pipelines/serial.md's torchrun
# block, which tests/docs runs and checks (CHECKS there) so CI starts that pair of replicas once


@pytest.mark.slow
def test_ctrl_c_stops_every_replica_and_rank0_saves_a_checkpoint(tmp_path):
    args = [a if a != "300" else "200000" for a in ARGS] + ["--set", "env.stop_value=100000"]
    proc = subprocess.Popen([*TORCHRUN, *args], cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    exp = tmp_path / "cartpole_dqn_seed3"
    deadline = time.monotonic() + 120
    while not (exp / "progress.csv").exists() and time.monotonic() < deadline:  # training has begun
        time.sleep(0.5)
    children = psutil.Process(proc.pid).children(recursive=True)
    assert len([c for c in children if "stride" in " ".join(c.cmdline())]) == 2
    os.kill(proc.pid, signal.SIGINT)  # what Ctrl-C sends torchrun
    out, err = proc.communicate(timeout=120)
    assert out.count("stride: interrupted (SIGINT)") == 1, err[-3000:]
    assert "learner replicas cannot be resumed yet" in out
    assert json.loads((exp / "result.json").read_text())["interrupted"]
    assert any(p.name.startswith("iteration_") for p in (exp / "ckpt").iterdir())
    assert not any(alive(c) for c in children)


def test_without_a_launcher_the_command_says_how_to_launch(tmp_path):
    out = subprocess.run([sys.executable, *ARGS], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "stride: error: policy.learn.multi_gpu=True: no torch.distributed launcher found (RANK / WORLD_SIZE unset): "
        "launch one process per replica with torchrun, e.g. `torchrun --standalone --nproc_per_node=2 -m stride "
        "-m serial ...`"]
    assert os.listdir(tmp_path) == []


def test_resume_with_replicas_is_refused(tmp_path):
    import copy

    main = copy.deepcopy(main_config)
    main["policy"]["learn"]["multi_gpu"] = False
    policy = serial_pipeline([main, copy.deepcopy(create_config)], seed=0, max_env_step=64, progress=False,
                             exp_name=str(tmp_path / "run"))
    cfg_path = os.path.join(policy.result["exp_dir"], "total_config.json")
    with open(cfg_path) as f:
        saved = json.load(f)
    saved["policy"]["learn"]["multi_gpu"] = True
    with open(cfg_path, "w") as f:
        json.dump(saved, f)
    with pytest.raises(ConfigError, match="resume= with policy.learn.multi_gpu=True is not supported"):
        serial_pipeline(None, resume=policy.result["exp_dir"], max_env_step=128, progress=False)
