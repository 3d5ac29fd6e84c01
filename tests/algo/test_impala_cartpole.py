"""Learning test: IMPALA (serial, replay with max_use) reaches CartPole-v1's stop value 475 (of 500)
over 100 evaluation episodes, confirmed by a fresh 100-episode evaluation on envs seeded differently
from training."""

from __future__ import annotations

import os

import numpy as np
import pytest

from stride.config import load_json_config
from stride.entry import serial_pipeline
from stride.entry.utils import build_env_managers
from stride.worker import BaseSerialEvaluator
from stride.zoo.cartpole.config.cartpole_impala_config import create_config, main_config

ENV_STEP_BUDGET = 100_000
STOP = 475


def _train_and_confirm(seed: int, tmp_path) -> dict:
    policy = serial_pipeline([main_config, create_config], seed=seed, max_env_step=ENV_STEP_BUDGET,
                             exp_name=str(tmp_path / f"seed{seed}"), progress=False)
    result = policy.result
    assert result["stop"], f"seed {seed}: did not reach {STOP} within {ENV_STEP_BUDGET} env steps: {result}"
    cfg = load_json_config(os.path.join(result["exp_dir"], "total_config.json"))
    _, env = build_env_managers(cfg, seed=10_000 + seed)
    evaluator = BaseSerialEvaluator(dict(cfg.policy.eval.evaluator, confirm_episode=0), env, policy.eval_mode)
    _, returns = evaluator.eval(n_episode=100)
    env.close()
    assert len(returns) == 100
    assert np.mean(returns) >= STOP, f"seed {seed}: fresh evaluation mean {np.mean(returns):.1f} < {STOP}"
    return result


@pytest.mark.learning
@pytest.mark.timeout(900)
def test_impala_cartpole_seed0(tmp_path):
    _train_and_confirm(0, tmp_path)


@pytest.mark.learning
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_impala_cartpole_other_seeds(seed, tmp_path):
    _train_and_confirm(seed, tmp_path)


def test_impala_resume_matches_uninterrupted(tmp_path):
    """Unrolls in the replay buffer (with their use counts), the collector's surplus unrolls and its
    in-flight segments all go into the checkpoint: a run resumed at iteration 40 ends at iteration 80
    with the weights of an uninterrupted run."""
    import copy

    import torch

    main = copy.deepcopy(main_config)
    main["env"]["stop_value"] = 1e9
    main["policy"]["eval"] = dict(evaluator=dict(eval_freq_envstep=500, confirm_episode=0))
    ref = serial_pipeline([main, create_config], seed=3, max_train_iter=80, exp_name=str(tmp_path / "ref"),
                          progress=False)
    serial_pipeline([main, create_config], seed=3, max_train_iter=40, exp_name=str(tmp_path / "run"), progress=False)
    resumed = serial_pipeline(None, resume=str(tmp_path / "run"), max_train_iter=80, progress=False)
    assert resumed.result["train_iter"] == 80 and resumed.result["env_step"] == ref.result["env_step"]
    assert all(torch.equal(a, b) for a, b in zip(ref.model.parameters(), resumed.model.parameters()))
