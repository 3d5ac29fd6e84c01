"""The entries give a continuous policy the env's action range (the compiler builds no env): Pendulum
SAC from the command and from serial_pipeline acts in [-2, 2] and saves that range."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch

from stride.zoo.pendulum.config import pendulum_sac_config as zoo

pytestmark = pytest.mark.timeout(240)

#: the zoo config shrunk to a few seconds (sizes changed here, never in the config)
SMALL = {"env.collector_env_num": 1, "env.evaluator_env_num": 1, "env.n_evaluator_episode": 1,
         "policy.random_collect_size": 8, "policy.learn.batch_size": 8, "policy.learn.update_per_collect": 1,
         "policy.model.actor_hidden_size_list": [8], "policy.model.critic_hidden_size_list": [8],
         "policy.eval.evaluator.confirm_episode": 0}


def _saved_range(exp) -> object:
    return json.loads((exp / "total_config.json").read_text())["policy"]["action_range"]


def test_serial_pipeline_fills_the_range_before_the_policy_and_the_saved_config(tmp_path):
    from stride.entry import serial_pipeline

    main = copy.deepcopy(zoo.main_config)
    for key, value in SMALL.items():
        node = main
        *path, last = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    assert "action_range" not in main["policy"]
    policy = serial_pipeline([main, zoo.create_config], seed=0, max_env_step=16, exp_name=str(tmp_path / "run"),
                             progress=False)
    assert policy.cfg.action_range == [[-2.0], [2.0]] == _saved_range(tmp_path / "run")
    with torch.no_grad():  # saturate the actor: its greedy torques reach the env's bounds, not +-1
        for p in policy.model.actor.parameters():
            p.mul_(100.0)
    obs = {i: np.random.default_rng(i).standard_normal(3).astype(np.float32) for i in range(32)}
    actions = np.stack([o["action"] for o in policy.eval_mode.forward(obs).values()])
    assert actions.max() > 1.9 or actions.min() < -1.9
    # the saved run: -m eval and --resume read the range it saved (no env is built to find it)
    from stride.entry.eval_entry import eval_pipeline

    assert eval_pipeline(str(tmp_path / "run"), n_episode=1)["n_episode"] == 1
    resumed = serial_pipeline(None, max_env_step=24, resume=str(tmp_path / "run"), progress=False)
    assert resumed.cfg.action_range == [[-2.0], [2.0]] and resumed.result["env_step"] >= 24


def test_the_command_saves_the_envs_range(tmp_path):
    from stride.entry.cli import main

    exp = tmp_path / "cli"
    sets = [arg for key, value in SMALL.items() for arg in ("--set", f"{key}={json.dumps(value)}")]
    assert main(["-m", "serial", "-e", "pendulum", "-p", "sac", "-s", "0", "--env-step", "16", "--no-progress",
                 "--exp-name", str(exp), *sets]) in (0, None)
    assert _saved_range(exp) == [[-2.0], [2.0]]
    assert "action_range=[[-2.0], [2.0]]," in (exp / "formatted_total_config.py").read_text()


def test_dist_config_and_its_roles_get_the_envs_range(tmp_path, monkeypatch):
    """-m dist --module config saves the filled range; every role's read of the data file fills it too."""
    from stride.entry.parallel import dist
    from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as par

    monkeypatch.chdir(tmp_path)
    out = dist.compile_dist_config("sac.py", 0, zoo.main_config, zoo.create_config, par.system_config,
                                   str(tmp_path / "exp"))
    assert _saved_range(tmp_path / "exp") == [[-2.0], [2.0]]
    assert dist.read_dist_config(out)[0].policy.action_range == [[-2.0], [2.0]]
