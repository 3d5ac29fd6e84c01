"""``load_saved_config`` on runs saved before the board games' mirror became their env's sample
transform: every compiled collector section then carried ``mirror`` (False but for connect four's
league), which ``--resume`` and ``-m eval`` must still read -- as ``env.mirror``."""

from __future__ import annotations

import copy
import json
import os

import pytest

from stride.config import compile_config, save_config
from stride.config.compile import load_saved_config


def _saved_as_before(cfg, tmp_path, mirror: bool) -> str:
    cfg.exp_name = str(tmp_path / "exp")
    os.makedirs(cfg.exp_name)
    save_config(cfg, cfg.exp_name)
    path = os.path.join(cfg.exp_name, "total_config.json")
    with open(path) as f:
        data = json.load(f)
    data["env"].pop("mirror", None)
    data["policy"]["collect"]["collector"]["mirror"] = mirror
    with open(path, "w") as f:
        json.dump(data, f)
    return path


def test_an_old_collector_mirror_false_is_dropped(tmp_path):
    from stride.zoo.cartpole.config import cartpole_dqn_config as dqn

    cfg = compile_config(copy.deepcopy(dqn.main_config), copy.deepcopy(dqn.create_config), save_cfg=False)
    loaded = load_saved_config(_saved_as_before(cfg, tmp_path, mirror=False))
    assert "mirror" not in loaded.policy.collect.collector and "mirror" not in loaded.env


def test_an_old_collector_mirror_true_becomes_env_mirror(tmp_path):
    pytest.importorskip("pettingzoo")
    from stride.zoo.pettingzoo.config import connect_four_league_config as c4

    main = copy.deepcopy(c4.main_config)
    main["env"]["mirror"] = False
    cfg = compile_config(main, copy.deepcopy(c4.create_config), save_cfg=False)
    loaded = load_saved_config(_saved_as_before(cfg, tmp_path, mirror=True))
    assert loaded.env.mirror is True and "mirror" not in loaded.policy.collect.collector
