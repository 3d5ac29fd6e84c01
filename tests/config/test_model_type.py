"""create_config.model.type is recorded as policy.model.type: the policy builds that model (not its
default_model), and a run's saved config (what --resume reads) names it too."""

from __future__ import annotations

import copy
import os

from stride.config import compile_config, save_config
from stride.config.compile import load_saved_config
from stride.entry.utils import build_policy
from stride.zoo.cartpole.config import cartpole_dqn_config as dqn
from stride.zoo.pendulum.config import pendulum_bc_config as bc


def test_a_named_model_is_built_and_saved(tmp_path):
    cfg = compile_config(copy.deepcopy(bc.main_config), copy.deepcopy(bc.create_config), save_cfg=False)
    assert cfg.policy.model.type == "qac" and cfg.policy.model.actor_hidden_size_list == [128, 128]
    assert type(build_policy(cfg).model).__name__ == "QAC"  # BC's default_model is 'dqn'
    cfg.exp_name = str(tmp_path / "exp")
    os.makedirs(cfg.exp_name)
    save_config(cfg, cfg.exp_name)
    saved = load_saved_config(os.path.join(cfg.exp_name, "total_config.json"))
    assert saved.policy.model.type == "qac" and type(build_policy(saved).model).__name__ == "QAC"


def test_no_named_model_adds_no_type():
    cfg = compile_config(copy.deepcopy(dqn.main_config), copy.deepcopy(dqn.create_config), save_cfg=False)
    assert "type" not in cfg.policy.model
