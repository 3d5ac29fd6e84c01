"""Learning test: DQN with prioritized replay (priority=True, IS weights) through AdvancedReplayBuffer
reaches CartPole-v1's stop value, the learner sending priorities back every step."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from stride.config import load_json_config
from stride.entry import serial_pipeline
from stride.entry.utils import build_env_managers
from stride.worker import BaseSerialEvaluator
from stride.zoo.cartpole.config.cartpole_dqn_per_config import create_config, main_config

ENV_STEP_BUDGET = 40_000


def _train_and_confirm(seed: int, tmp_path) -> dict:
    policy = serial_pipeline([main_config, create_config], seed=seed, max_env_step=ENV_STEP_BUDGET,
                             exp_name=str(tmp_path / f"seed{seed}"), progress=False)
    result = policy.result
    assert result["stop"], f"seed {seed}: did not reach 195 within {ENV_STEP_BUDGET} env steps: {result}"
    cfg = load_json_config(os.path.join(result["exp_dir"], "total_config.json"))
    assert cfg.policy.other.replay_buffer.type == "advanced" and cfg.policy.priority and cfg.policy.priority_IS_weight
    # the buffer state in the final checkpoint shows priorities came back from the learner
    ckpt = torch.load(result["final_checkpoint"], map_location="cpu", weights_only=True)
    prio = ckpt["components"]["buffer"]["priority"].numpy()
    assert prio.size and (prio != 1.0).mean() > 0.5, "the learner's priorities did not reach the buffer"
    # a fresh 100-episode evaluation of the final policy, on envs seeded differently from training
    _, env = build_env_managers(cfg, seed=10_000 + seed)
    evaluator = BaseSerialEvaluator(dict(cfg.policy.eval.evaluator, confirm_episode=0), env, policy.eval_mode)
    _, returns = evaluator.eval(n_episode=100)
    env.close()
    assert len(returns) == 100
    assert np.mean(returns) >= 195, f"seed {seed}: fresh evaluation mean {np.mean(returns):.1f} < 195"
    return result


# Each seed takes ~5 CPU s with its evaluations: seed 0 runs in CI, seeds 1-4 in the slow set.
@pytest.mark.learning
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow),
                                  pytest.param(3, marks=pytest.mark.slow), pytest.param(4, marks=pytest.mark.slow)])
def test_dqn_per_cartpole(seed, tmp_path):
    _train_and_confirm(seed, tmp_path)
