"""The reward-model pipeline: where the model is called, its state in checkpoints, exact resume, the command."""

from __future__ import annotations

import copy
import json
import os
from typing import Any, Dict, List

import numpy as np
import pytest
import torch

from stride.entry import serial_pipeline_reward_model, serial_pipeline_reward_model_onpolicy
from stride.reward_model import BaseRewardModel
from stride.utils.errors import ConfigError, UnknownNameError
from stride.utils.registry import REWARD_MODEL_REGISTRY
from stride.worker import BaseLearner


def her_cfg(n_bits: int = 4):
    from stride.zoo.bitflip.config.bitflip_dqn_her_config import create_config, main_config

    main = copy.deepcopy(main_config)
    main["env"].update(n_bits=n_bits, collector_env_num=2, evaluator_env_num=2, n_evaluator_episode=2,
                       stop_value=2.0)  # never reached: the runs end at their limits
    main["policy"]["model"].update(obs_shape=2 * n_bits, action_shape=n_bits, encoder_hidden_size_list=[32, 32, 16])
    main["policy"]["collect"]["n_episode"] = 4
    main["policy"]["learn"].update(batch_size=16, update_per_collect=5)
    main["policy"]["eval"]["evaluator"].update(eval_freq_envstep=100, confirm_episode=0)
    return main, copy.deepcopy(create_config)


def _ckpt(exp: str, train_iter: int) -> Dict[str, Any]:
    return torch.load(os.path.join(exp, "ckpt", f"iteration_{train_iter}.pth.tar"), weights_only=True)


def test_resume_matches_an_uninterrupted_run_reward_model_included(tmp_path):
    ref, run = str(tmp_path / "ref"), str(tmp_path / "run")
    serial_pipeline_reward_model(her_cfg(), seed=1, max_train_iter=40, exp_name=ref, progress=False)
    serial_pipeline_reward_model(her_cfg(), seed=1, max_train_iter=20, exp_name=run, progress=False)
    assert "rng" in _ckpt(run, 20)["components"]["reward_model"]  # the relabelling RNG travels with the checkpoint
    resumed = serial_pipeline_reward_model(None, max_train_iter=40, resume=run, progress=False)
    assert resumed.result["train_iter"] == 40
    assert resumed.result["env_step"] == json.loads((tmp_path / "ref" / "result.json").read_text())["env_step"]
    a, b = _ckpt(ref, 40), _ckpt(run, 40)
    assert a["components"]["reward_model"] == b["components"]["reward_model"]
    pa, pb = a["policy"]["model"], b["policy"]["model"]
    assert all(torch.equal(pa[k], pb[k]) for k in pa), "resumed run diverged from the uninterrupted one"


class _Recording(BaseRewardModel):
    """A test reward model: reward = -3 everywhere, every call recorded."""

    calls: List[str] = []

    @classmethod
    def declared_config(cls) -> Dict[str, object]:
        return dict(super().declared_config(), type="test_recording")

    def estimate(self, batch: Any) -> Any:
        _Recording.calls.append("estimate")
        if isinstance(batch, list):  # on-policy: the collect's samples
            return [dict(sample, reward=-3.0) for sample in batch]
        out = dict(batch)
        out["reward"] = np.full(len(out["reward"]), -3.0, dtype=np.float32)
        return out

    def collect_data(self, data) -> None:
        _Recording.calls.append(f"collect_data:{len(data)}")

    def train(self) -> None:
        _Recording.calls.append("train")

    def clear_data(self) -> None:
        _Recording.calls.append("clear_data")


def test_the_model_sits_between_collection_and_learning(tmp_path, monkeypatch):
    if "test_recording" not in REWARD_MODEL_REGISTRY:
        REWARD_MODEL_REGISTRY.register("test_recording", _Recording)
    _Recording.calls = []
    seen: List[np.ndarray] = []
    train = BaseLearner.train

    def spy(self, data, envstep=None):
        seen.append(np.asarray(data["reward"]))
        return train(self, data, envstep)

    monkeypatch.setattr(BaseLearner, "train", spy)
    from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config

    main = copy.deepcopy(main_config)
    main["policy"]["learn"].update(update_per_collect=2, batch_size=8)
    main["policy"]["eval"]["evaluator"]["eval_freq_envstep"] = 10_000
    main["reward_model"] = dict(type="test_recording", clear_buffer_per_iters=4)
    serial_pipeline_reward_model([main, create_config], seed=0, max_train_iter=8, exp_name=str(tmp_path / "r"),
                                 progress=False)
    assert len(seen) == 8 and all((r == -3.0).all() for r in seen)  # the learner saw only the model's reward
    # per collect: collect_data + train, then estimate per batch; clear_data after train_iter 4 and 8
    assert _Recording.calls[:4] == ["collect_data:8", "train", "estimate", "estimate"]
    assert _Recording.calls.count("clear_data") == 2
    assert _Recording.calls.index("clear_data") == 2 * 4  # after the second collect's batches (train_iter 4)


def test_on_policy_learners_train_on_the_estimated_samples(tmp_path, monkeypatch):
    from tests.entry.test_serial_onpolicy import tiny

    if "test_recording" not in REWARD_MODEL_REGISTRY:
        REWARD_MODEL_REGISTRY.register("test_recording", _Recording)
    _Recording.calls = []
    seen: List[List[float]] = []
    train = BaseLearner.train

    def spy(self, data, envstep=None):
        seen.append([float(s["reward"]) for s in data])
        return train(self, data, envstep)

    monkeypatch.setattr(BaseLearner, "train", spy)
    main, create = tiny()
    create["reward_model"] = dict(type="test_recording")
    serial_pipeline_reward_model_onpolicy([main, create], seed=0, max_train_iter=2, exp_name=str(tmp_path / "p"),
                                          progress=False)
    assert len(seen) == 2 and all(r == [-3.0] * 32 for r in seen)
    assert _Recording.calls == ["collect_data:32", "train", "estimate"] * 2


def test_refusals_are_one_clear_line(tmp_path):
    from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config

    with pytest.raises(ConfigError, match="the config has no reward_model section"):
        serial_pipeline_reward_model([main_config, create_config], exp_name=str(tmp_path / "a"), progress=False)
    with pytest.raises(ConfigError, match="policy 'dqn' is off-policy: use serial_pipeline_reward_model$"):
        serial_pipeline_reward_model_onpolicy(her_cfg(), exp_name=str(tmp_path / "b"), progress=False)
    main, create = her_cfg()
    main["reward_model"]["her_stratgy"] = "final"
    with pytest.raises(ConfigError, match="reward_model.her_stratgy.*did you mean 'reward_model.her_strategy'"):
        serial_pipeline_reward_model([main, create], exp_name=str(tmp_path / "c"), progress=False)
    main, create = her_cfg()
    create["reward_model"]["type"] = "hre"
    with pytest.raises(UnknownNameError, match="'hre'.*her"):
        serial_pipeline_reward_model([main, create], exp_name=str(tmp_path / "d"), progress=False)
    assert not any((tmp_path / n).exists() for n in "abcd")  # nothing written for a refused config


def test_the_command_runs_a_reward_model_config(tmp_path, monkeypatch, capsys):
    from stride.entry.cli import main

    main_cfg, create = her_cfg()
    path = tmp_path / "my_her_config.py"
    path.write_text(f"main_config = {main_cfg!r}\ncreate_config = {create!r}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial_reward_model", "-c", str(path), "--train-iter", "5", "--no-progress",
                 "--exp-name", "cli"]) == 0
    assert json.loads((tmp_path / "cli" / "result.json").read_text())["train_iter"] == 5
    assert "reward_model" in _ckpt(str(tmp_path / "cli"), 5)["components"]
    cartpole = tmp_path / "plain_config.py"
    cartpole.write_text("from stride.zoo.cartpole.config.cartpole_dqn_config import main_config, create_config\n")
    capsys.readouterr()
    assert main(["-m", "serial_reward_model", "-c", str(cartpole), "--train-iter", "5", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("stride: error: the config has no reward_model section") and "\n" not in err
