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


def _small_ppo(exp_name: str):
    main, create = copy.deepcopy(zoo_config("hopper", "ppo"))
    main["exp_name"] = exp_name
    main["env"].update(evaluator_env_num=1, n_evaluator_episode=1, max_episode_steps=50)
    main["policy"]["eval"]["evaluator"].update(eval_freq_envstep=10_000, confirm_episode=0)
    main["policy"]["collect"]["n_sample"] = 100
    main["policy"]["learn"].update(epoch_per_collect=2)
    return [main, create]


def test_resume_restores_the_statistics_exactly(tmp_path):
    ref = serial_pipeline_onpolicy(_small_ppo(str(tmp_path / "ref")), seed=0, max_env_step=400, progress=False)
    first = serial_pipeline_onpolicy(_small_ppo(str(tmp_path / "run")), seed=0, max_env_step=200, progress=False)
    saved = torch.load(first.result["final_checkpoint"], weights_only=True)["policy"]["model"]
    assert saved["obs_norm.count"].item() == 200  # the statistics of the interrupted half, in its checkpoint
    resumed = serial_pipeline_onpolicy(None, resume=str(tmp_path / "run"), max_env_step=400, progress=False)
    assert resumed.result["env_step"] == ref.result["env_step"]
    a, b = ref.model.state_dict(), resumed.model.state_dict()
    assert a["obs_norm.count"].item() >= 400
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), "resumed run diverged"


def test_evaluation_from_a_checkpoint_applies_the_statistics(tmp_path):
    from stride.entry.eval_entry import eval_pipeline

    policy = serial_pipeline_onpolicy(_small_ppo(str(tmp_path / "run")), seed=0, max_env_step=300, progress=False)
    saved = torch.load(policy.result["final_checkpoint"], weights_only=True)["policy"]["model"]
    assert torch.equal(saved["obs_norm.mean"], policy.model.obs_norm.mean) and saved["obs_norm.count"].item() >= 300
    with_stats = eval_pipeline(str(tmp_path / "run"), n_episode=2, seed=7)
    # the same weights without the statistics act differently: evaluation did use them
    saved["obs_norm.count"].zero_()
    saved["obs_norm.mean"].zero_()
    saved["obs_norm.var"].fill_(1.0)
    torch.save(dict(torch.load(policy.result["final_checkpoint"], weights_only=True), policy=dict(model=saved)),
               str(tmp_path / "raw.pth.tar"))
    os.makedirs(tmp_path / "run" / "ckpt", exist_ok=True)
    os.replace(tmp_path / "raw.pth.tar", tmp_path / "run" / "ckpt" / "raw.pth.tar")
    without = eval_pipeline(str(tmp_path / "run" / "ckpt" / "raw.pth.tar"), n_episode=2, seed=7)
    assert with_stats["returns"] != without["returns"]
