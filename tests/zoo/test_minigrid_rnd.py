"""PPO + RND on MiniGrid DoorKey: an interrupted run resumes exactly, the reward model included (the command's
run, its reward model and second value head in the checkpoint: docs/pipelines/reward_model.md, tests/docs)."""

from __future__ import annotations

import os

import pytest
import torch

pytest.importorskip("minigrid")

SMALL = ["--set", "env.collector_env_num=2", "--set", "env.evaluator_env_num=2", "--set", "env.n_evaluator_episode=2",
         "--set", "policy.collect.n_sample=128", "--set", "policy.learn.epoch_per_collect=1",
         "--set", "policy.learn.learner.hook.save_ckpt_after_iter=2"]


def _ckpt(exp: str, train_iter: int) -> dict:
    return torch.load(os.path.join(exp, "ckpt", f"iteration_{train_iter}.pth.tar"), weights_only=True)


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
