"""``policy.cuda=True`` end to end on a GPU: each algorithm family trains a few iterations on the
device, its checkpoint evaluates and resumes, and the learner replicas' NCCL path runs under torchrun.

CI has no GPU, so every test here is skipped there; they run wherever ``torch.cuda.is_available()``
(the project's GPU sessions run them and report the result in the closing note).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from stride.entry import eval_pipeline, serial_pipeline
from stride.entry.utils import zoo_config

pytestmark = [pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
              # cuDNN recompacting an RNN's weights at every call (a deep-copied target net) is a bug here
              pytest.mark.filterwarnings("error:RNN module weights:UserWarning")]

CASES = [("cartpole", "dqn"), ("cartpole", "ppo"), ("cartpole", "impala"), ("pendulum", "sac"),
         ("pendulum", "td3"), ("minatar_breakout", "dqn"), ("cartpole_pomdp", "r2d2"), ("doorkey", "ppo_rnd")]


def _small(env: str, policy: str, cuda: bool = True) -> list:
    """The zoo config, small: 2 evaluation episodes, a random warm-up (where it has one) of at most 300
    env steps, so the 600 env steps of the test train on the GPU."""
    main, create = zoo_config(env, policy)
    pol = {**main["policy"], "cuda": cuda}
    if "random_collect_size" in pol:
        pol["random_collect_size"] = min(int(pol["random_collect_size"]), 300)
    main = {**main, "env": {**main["env"], "n_evaluator_episode": 2, "evaluator_env_num": 1}, "policy": pol}
    return [main, create]


@pytest.mark.parametrize("env,policy", CASES, ids=[f"{e}-{p}" for e, p in CASES])
def test_trains_on_the_gpu_and_its_checkpoint_evaluates_and_resumes(tmp_path, env, policy):
    exp = str(tmp_path / "run")
    trained = serial_pipeline(_small(env, policy), seed=0, max_env_step=600, exp_name=exp, progress=False)
    devices = {p.device.type for p in trained.model.parameters()}
    assert devices == {"cuda"}, devices
    assert trained.result["train_iter"] > 0
    params = [p.detach().clone() for p in trained.model.parameters()]
    assert all(torch.isfinite(p).all() for p in params)

    result = eval_pipeline(exp, n_episode=2, seed=11)  # the checkpoint's tensors were on the GPU
    assert result["n_episode"] == 2 and result["train_iter"] == trained.result["train_iter"]

    more = trained.result["env_step"] + 300  # replay warm-ups can overshoot the first limit
    resumed = serial_pipeline(_small(env, policy), seed=0, max_env_step=more, exp_name=exp, progress=False,
                              resume=exp)
    assert resumed.result["env_step"] >= more and resumed.result["train_iter"] > trained.result["train_iter"]
    assert {p.device.type for p in resumed.model.parameters()} == {"cuda"}


def test_one_learner_replica_uses_nccl_under_torchrun(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"):
        env.pop(name, None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=1",
           "-m", "stride", "-m", "serial", "-e", "cartpole", "-p", "dqn", "-s", "0", "--env-step", "300",
           "--no-progress", "--set", "policy.learn.multi_gpu=True", "--set", "policy.cuda=True"]
    out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads((tmp_path / "cartpole_dqn_seed0" / "result.json").read_text())
    assert result["replicas"] == 1 and result["train_iter"] > 0
