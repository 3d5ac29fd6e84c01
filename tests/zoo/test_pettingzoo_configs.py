"""PettingZoo zoo: every config through the command path for a few hundred env steps, its env and
model wired as the config says (agent-keyed env behind MultiAgentManager; masked int8 board
observations reaching the learner as {'observation', 'action_mask'}). Needs ``[multiagent]``."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("pettingzoo")

from stride.entry.cli import main as cli_main
from stride.entry.utils import zoo_config, zoo_envs, zoo_policies
from stride.policy.batching import PolicyIO


def test_the_zoo_names_the_pettingzoo_envs():
    assert {"tictactoe", "connect_four", "simple_spread"} <= set(zoo_envs())
    assert zoo_policies("tictactoe") == zoo_policies("connect_four") == ["dqn"] and zoo_policies("simple_spread") == ["ppo"]
    main, create = zoo_config("tictactoe", "dqn")
    assert create["env"]["type"] == "pettingzoo" and main["env"]["opponent"] == "random"


@pytest.mark.parametrize("env,shape,n", [("tictactoe", (3, 3, 2), 9), ("connect_four", (6, 7, 2), 7)])
def test_board_game_dqn_from_the_command_learns_on_masked_board_batches(env, shape, n, tmp_path, capsys, monkeypatch):
    seen = []
    batch = PolicyIO.learn_batch

    def spy(self, data):
        out = batch(self, data)
        seen.append({k: (v.dtype, tuple(v.shape[1:])) for k, v in out["obs"].items()})
        # the TD target's next-action mask is the next observation's own
        board = out["next_obs"]["observation"].sum(-1)
        free = (board == 0).flatten(1) if env == "tictactoe" else (board[:, 0] == 0)  # connect four: the top row
        assert torch.equal(out["next_obs"]["action_mask"].bool(), free)
        return out

    monkeypatch.setattr(PolicyIO, "learn_batch", spy)
    rc = cli_main(["-m", "serial", "-e", env, "-p", "dqn", "-s", "0", "--env-step", "300",
                   "--set", "policy.random_collect_size=64", "--set", "env.n_evaluator_episode=2",
                   "--set", "env.evaluator_env_num=2", "--exp-name", str(tmp_path / "run"), "--no-progress"])
    assert rc == 0, capsys.readouterr()
    assert seen and all(s == {"observation": (torch.int8, shape), "action_mask": (torch.int8, (n,))} for s in seen)
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["env_step"] >= 300


def test_simple_spread_ppo_from_the_command_runs_three_agent_streams(tmp_path, capsys):
    pytest.importorskip("mpe2")
    rc = cli_main(["-m", "serial_onpolicy", "-e", "simple_spread", "-p", "ppo", "-s", "0", "--env-step", "300",
                   "--set", "policy.collect.n_sample=150", "--set", "policy.learn.batch_size=50",
                   "--set", "env.collector_env_num=2", "--set", "env.evaluator_env_num=1",
                   "--set", "env.n_evaluator_episode=3", "--exp-name", str(tmp_path / "ss"), "--no-progress"])
    assert rc == 0, capsys.readouterr()
    result = json.loads((tmp_path / "ss" / "result.json").read_text())
    assert result["env_step"] >= 300
    rows = (tmp_path / "ss" / "progress.csv").read_text().splitlines()
    assert np.isfinite(float(rows[1].split(",")[2]))  # a first evaluation's mean return over the agents' episodes


def test_a_run_resumes_from_its_checkpoint_with_dict_observations_in_replay(tmp_path, capsys):
    common = ["-m", "serial", "-e", "tictactoe", "-p", "dqn", "-s", "0", "--set", "policy.random_collect_size=64",
              "--set", "env.n_evaluator_episode=2", "--set", "env.evaluator_env_num=2", "--no-progress"]
    assert cli_main(common + ["--env-step", "200", "--exp-name", str(tmp_path / "r")]) == 0, capsys.readouterr()
    assert cli_main(["--resume", str(tmp_path / "r"), "--env-step", "400", "--no-progress"]) == 0, capsys.readouterr()
    assert json.loads((tmp_path / "r" / "result.json").read_text())["env_step"] >= 400
