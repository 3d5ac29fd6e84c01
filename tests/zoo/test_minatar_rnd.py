"""PPO + RND on MinAtar from the command: RND's image path (conv encoder, uint8 planes) in a real run."""

from __future__ import annotations

import json
import os

import pytest
import torch

pytest.importorskip("minatar")


def test_the_command_runs_the_minatar_rnd_config(tmp_path, monkeypatch):
    from stride.entry.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial", "-e", "minatar_breakout", "-p", "ppo_rnd", "-s", "0", "--env-step", "512",
                 "--no-progress", "--exp-name", "run", "--set", "env.collector_env_num=2",
                 "--set", "env.evaluator_env_num=1", "--set", "env.n_evaluator_episode=1",
                 "--set", "policy.collect.n_sample=256", "--set", "policy.learn.epoch_per_collect=1",
                 "--set", "policy.learn.learner.hook.save_ckpt_after_iter=1"]) == 0
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["env_step"] >= 512
    state = torch.load(os.path.join("run", "ckpt", f"iteration_{result['train_iter']}.pth.tar"), weights_only=True)
    nets = state["components"]["reward_model"]["networks"]
    assert nets["obs_norm.mean"].shape == (4, 10, 10) and nets["obs_norm.count"].item() == result["env_step"]
    assert any(v.dim() == 4 for k, v in nets.items() if k.startswith("predictor.")), "RND's predictor has no conv layer"
