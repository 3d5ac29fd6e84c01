"""Smoke tests of the MuJoCo zoo configs (needs the ``mujoco`` extra, part of ``test``): each runs a
few hundred env steps through its pipeline with its env and model wired as the config says, sizes cut."""

from __future__ import annotations

import copy
import os

import pytest
import torch

pytest.importorskip("mujoco")

from stride.entry import serial_pipeline, serial_pipeline_onpolicy  # noqa: E402
from stride.entry.utils import zoo_config, zoo_policies  # noqa: E402

pytestmark = pytest.mark.timeout(240)

CASES = [(env, algo) for env in ("halfcheetah", "hopper") for algo in ("sac", "td3", "ppo")]


def test_the_zoo_lists_them():
    for env in ("halfcheetah", "hopper"):
        assert {"sac", "td3", "ppo"} <= set(zoo_policies(env))


@pytest.mark.parametrize("env,algo", CASES)
def test_config_runs_a_few_hundred_steps(env, algo, tmp_path):
    main, create = copy.deepcopy(zoo_config(env, algo))
    main["env"].update(evaluator_env_num=1, n_evaluator_episode=1, max_episode_steps=50)
    policy = main["policy"]
    policy["eval"]["evaluator"].update(eval_freq_envstep=200, confirm_episode=0)
    if algo == "ppo":
        policy["collect"]["n_sample"] = 100
        policy["learn"].update(epoch_per_collect=1)
        run = serial_pipeline_onpolicy
    else:
        policy["random_collect_size"] = 100
        policy["learn"]["batch_size"] = 32
        policy["other"]["replay_buffer"]["replay_buffer_size"] = 1000
        run = serial_pipeline
    out = run([main, create], seed=0, max_env_step=300, exp_name=str(tmp_path / "run"), progress=False)
    assert out.result["env_step"] >= 300
    model = out.model
    first = next(m for m in model.modules() if isinstance(m, torch.nn.Linear))
    assert first.in_features in (17, 11, 17 + 6, 11 + 3)
    if algo == "ppo":  # normalised observations; statistics in the saved model
        assert model.obs_norm.count.item() >= 300
        state = torch.load(out.result["final_checkpoint"], weights_only=True)
        assert torch.equal(state["policy"]["model"]["obs_norm.mean"], model.obs_norm.mean)
        assert os.path.exists(out.result["final_checkpoint"])
