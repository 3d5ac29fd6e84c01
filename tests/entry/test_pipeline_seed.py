"""serial_pipeline (Python API): a seed reproduces a run exactly; another seed gives another run."""

from __future__ import annotations

import copy
import json
import os

import torch

from stride.entry import serial_pipeline
from stride.zoo.cartpole.config import cartpole_dqn_config as zoo


def _run(seed: int, name: str):
    main, create = copy.deepcopy(zoo.main_config), copy.deepcopy(zoo.create_config)
    main["env"].update(collector_env_num=2, evaluator_env_num=2, n_evaluator_episode=2)
    main["policy"]["learn"]["batch_size"] = 16
    return serial_pipeline([main, create], seed=seed, max_train_iter=20, progress=False, exp_name=name)


def test_same_seed_same_run_other_seed_other_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a, b, c = _run(0, "a"), _run(0, "b"), _run(1, "c")
    sa, sb, sc = a.model.state_dict(), b.model.state_dict(), c.model.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)
    assert a.result["train_iter"] == 20 and a.result["env_step"] == b.result["env_step"]
    assert a.result["eval_return"] == b.result["eval_return"]
    with open(os.path.join("a", "result.json")) as f:
        assert json.load(f)["train_iter"] == 20
    assert sorted(os.listdir(tmp_path)) == ["a", "b", "c"]
