"""serial_pipeline_onpolicy: experiment folder and result, one train_iter per collect, exact resume,
``stride -m serial`` dispatch for on-policy configs, PPO continuous and A2C smoke runs."""

from __future__ import annotations

import copy
import json
import os

import pytest
import torch

from stride.entry import serial_pipeline_onpolicy

pytestmark = pytest.mark.timeout(240)


def tiny(policy_type: str = "ppo", env_id: str = "CartPole-v1") -> list:
    continuous = env_id == "Pendulum-v1"
    model = dict(obs_shape=3 if continuous else 4, action_shape=1 if continuous else 2,
                 encoder_hidden_size_list=[16], actor_head_hidden_size=16, critic_head_hidden_size=16)
    if continuous:
        model["action_space"] = "continuous"
    learn = dict(learning_rate=1e-3, learner=dict(hook=dict(save_ckpt_after_iter=1000)))
    if policy_type == "ppo":
        learn.update(epoch_per_collect=2, batch_size=16)
    policy = dict(model=model, learn=learn, collect=dict(n_sample=32), eval=dict(evaluator=dict(eval_freq=2)))
    if continuous:
        policy["action_range"] = [-2.0, 2.0]
    main = dict(exp_name="tiny", env=dict(env_id=env_id, collector_env_num=2, evaluator_env_num=2,
                                          n_evaluator_episode=2, stop_value=1e9), policy=policy)
    create = dict(env=dict(type="gymnasium"), env_manager=dict(type="base"), policy=dict(type=policy_type))
    return [main, create]


def _params(exp: str, it: int) -> dict:
    return torch.load(os.path.join(exp, "ckpt", f"iteration_{it}.pth.tar"), weights_only=True)["policy"]["model"]


def test_runs_and_writes_the_experiment_folder(tmp_path):
    exp = str(tmp_path / "run")
    policy = serial_pipeline_onpolicy(tiny(), seed=0, max_train_iter=3, exp_name=exp, progress=False)
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result == policy.result
    assert result["train_iter"] == 3 and result["stop"] is False and result["interrupted"] is False
    assert result["env_step"] >= 3 * 32
    for name in ("total_config.py", "formatted_total_config.py", "total_config.json", "progress.csv"):
        assert (tmp_path / "run" / name).exists(), name
    rows = (tmp_path / "run" / "progress.csv").read_text().splitlines()
    assert rows[0].startswith("train_iter,envstep") and len(rows) == 3  # evals at iter 0 and 2
    assert os.path.exists(result["final_checkpoint"])


def test_resume_matches_an_uninterrupted_run(tmp_path):
    ref, run = str(tmp_path / "ref"), str(tmp_path / "run")
    serial_pipeline_onpolicy(tiny(), seed=1, max_train_iter=6, exp_name=ref, progress=False)
    serial_pipeline_onpolicy(tiny(), seed=1, max_train_iter=3, exp_name=run, progress=False)
    resumed = serial_pipeline_onpolicy(None, max_train_iter=6, resume=run, progress=False)
    assert resumed.result["train_iter"] == 6
    assert resumed.result["env_step"] == json.loads((tmp_path / "ref" / "result.json").read_text())["env_step"]
    a, b = _params(ref, 6), _params(run, 6)
    assert all(torch.equal(a[k], b[k]) for k in a), "resumed run diverged from the uninterrupted one"


def test_stride_serial_dispatches_on_policy_configs(tmp_path, monkeypatch):
    from stride.entry.cli import main

    main_cfg, create = tiny("a2c")
    path = tmp_path / "my_a2c_config.py"
    path.write_text(f"main_config = {main_cfg!r}\ncreate_config = {create!r}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial", "-c", str(path), "--train-iter", "2", "--no-progress", "--exp-name", "cli"]) == 0
    result = json.loads((tmp_path / "cli" / "result.json").read_text())
    assert result["train_iter"] == 2  # one train_iter per collect: the on-policy loop ran
    assert "replay_buffer" not in json.loads((tmp_path / "cli" / "total_config.json").read_text())["policy"]["other"]


def test_ppo_continuous_pendulum_smoke(tmp_path):
    policy = serial_pipeline_onpolicy(tiny("ppo", "Pendulum-v1"), seed=0, max_train_iter=2,
                                      exp_name=str(tmp_path / "pend"), progress=False)
    assert policy.result["train_iter"] == 2 and policy.result["eval_return"] < 0
    # no action_range given: taken from the env, so even wide Gaussian samples stay inside Box(-2, 2)
    cfg = copy.deepcopy(tiny("ppo", "Pendulum-v1"))
    del cfg[0]["policy"]["action_range"]
    cfg[0]["policy"]["model"]["sigma_init"] = 10.0
    policy = serial_pipeline_onpolicy(cfg, seed=0, max_train_iter=2, exp_name=str(tmp_path / "auto"), progress=False)
    assert policy.result["train_iter"] == 2
    saved = json.loads((tmp_path / "auto" / "total_config.json").read_text())
    assert saved["policy"]["action_range"] == [[-2.0], [2.0]]
    # a range that does not match the env's is refused before anything runs
    from stride.utils.errors import ConfigError

    cfg[0]["policy"]["action_range"] = [-5.0, 5.0]
    with pytest.raises(ConfigError, match=r"policy.action_range=.* does not match the env's action space"):
        serial_pipeline_onpolicy(cfg, seed=0, max_train_iter=2, exp_name=str(tmp_path / "bad"), progress=False)
    assert not (tmp_path / "bad").exists()
