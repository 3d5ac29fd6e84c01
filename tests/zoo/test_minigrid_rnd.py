"""PPO + RND on MiniGrid DoorKey: the config from the command, its reward model in checkpoints, exact resume."""

from __future__ import annotations

import json
import os

import pytest
import torch

pytest.importorskip("minigrid")

SMALL = ["--set", "env.collector_env_num=2", "--set", "env.evaluator_env_num=2", "--set", "env.n_evaluator_episode=2",
         "--set", "policy.collect.n_sample=128", "--set", "policy.learn.epoch_per_collect=1",
         "--set", "policy.learn.learner.hook.save_ckpt_after_iter=2"]


def _ckpt(exp: str, train_iter: int) -> dict:
    return torch.load(os.path.join(exp, "ckpt", f"iteration_{train_iter}.pth.tar"), weights_only=True)


def test_the_command_finds_and_runs_the_rnd_config(tmp_path, monkeypatch):
    from stride.entry.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial", "-e", "doorkey", "-p", "ppo_rnd", "-s", "0", "--env-step", "300", "--no-progress",
                 "--exp-name", "rnd", *SMALL]) == 0
    result = json.loads((tmp_path / "rnd" / "result.json").read_text())
    assert result["env_step"] >= 300 and result["train_iter"] >= 2
    state = _ckpt(str(tmp_path / "rnd"), result["train_iter"])
    rm = state["components"]["reward_model"]
    assert rm["networks"]["obs_norm.count"].item() == result["env_step"]  # every collected next_obs was seen
    assert state["policy"]["model"]["critic_head.1.weight"].shape[0] == 2  # the intrinsic value head


def test_resume_matches_an_uninterrupted_run(tmp_path, monkeypatch):
    from stride.entry.cli import main

    monkeypatch.chdir(tmp_path)
    base = ["-m", "serial", "-e", "doorkey", "-p", "ppo_rnd", "-s", "1", "--no-progress", *SMALL]
    assert main([*base, "--train-iter", "4", "--exp-name", "ref"]) == 0
    assert main([*base, "--train-iter", "2", "--exp-name", "run"]) == 0
    assert main(["-m", "serial", "--resume", "run", "--train-iter", "4", "--no-progress"]) == 0
    a, b = _ckpt("ref", 4), _ckpt("run", 4)
    ra, rb = a["components"]["reward_model"], b["components"]["reward_model"]
    assert ra["return_values"] == rb["return_values"] and ra["return_env_ids"] == [0, 1]
    assert all(torch.equal(ra["networks"][k], rb["networks"][k]) for k in ra["networks"])
    pa, pb = a["policy"]["model"], b["policy"]["model"]
    assert all(torch.equal(pa[k], pb[k]) for k in pa), "resumed run diverged from the uninterrupted one"
