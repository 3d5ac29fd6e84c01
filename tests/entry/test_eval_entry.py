"""``stride -m eval`` / ``eval_pipeline``: a fresh evaluation of a saved run's policy."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from stride.config import load_json_config
from stride.entry import serial_pipeline
from stride.entry.cli import main
from stride.entry.eval_entry import eval_pipeline
from stride.entry.utils import build_env_managers
from stride.worker import BaseSerialEvaluator
from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A short DQN run (30 train iterations): its policy and experiment folder."""
    exp = str(tmp_path_factory.mktemp("eval") / "exp")
    policy = serial_pipeline([main_config, create_config], seed=1, max_train_iter=30, exp_name=exp, progress=False)
    return policy, policy.result["exp_dir"]


def test_eval_matches_the_in_memory_policy_on_the_same_envs(run):
    policy, exp = run
    r = eval_pipeline(exp, n_episode=12, seed=77)
    cfg = load_json_config(os.path.join(exp, "total_config.json"))
    _, env = build_env_managers(cfg, seed=77)
    _, returns = BaseSerialEvaluator(dict(cfg.policy.eval.evaluator, confirm_episode=0), env, policy.eval_mode).eval(n_episode=12)
    env.close()
    assert r["n_episode"] == 12 and len(r["returns"]) == 12
    assert sorted(r["returns"]) == sorted(returns)  # the checkpoint holds the final weights
    assert r["mean"] == pytest.approx(np.mean(returns))
    assert r["train_iter"] == 30 and r["reached"] == (np.mean(returns) >= 195)
    with open(r["result_file"]) as f:
        assert json.load(f)["returns"] == r["returns"]


def test_eval_defaults_to_fresh_seeds_and_the_configs_episode_count(run):
    _, exp = run
    r = eval_pipeline(exp, n_episode=None)
    assert r["seed"] == 1 + 10_000
    # the size of the run's confirmation (100), not of its 10-episode screens
    assert r["n_episode"] == load_json_config(os.path.join(exp, "total_config.json")).policy.eval.evaluator.confirm_episode


def test_eval_command_prints_the_summary(run, capsys):
    _, exp = run
    assert main(["-m", "eval", "--load", exp, "--episodes", "8", "-s", "3"]) == 0
    out = capsys.readouterr().out
    assert "over 8 episodes, eval envs seeded 3: mean" in out and "stop value 195" in out


@pytest.mark.parametrize("argv, words", [
    (["-m", "eval"], ["--load"]),
    (["-m", "eval", "--load", "no/such/run"], ["'no/such/run'", "does not exist"]),
    (["-m", "eval", "--load", "{exp}", "--episodes", "0"], [">= 1", "0"]),
    (["-m", "eval", "--load", "{exp}", "-s", "1", "2"], ["one seed", "[1, 2]"]),
])
def test_eval_command_bad_input_is_one_line(run, capsys, argv, words):
    _, exp = run
    assert main([a.format(exp=exp) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("stride: error:")
    for w in words:
        assert w in err


def test_evaluations_of_different_sizes_keep_their_own_files(run):
    """A quick 2-episode look at a checkpoint must not overwrite its 12-episode result (issue 28)."""
    _, exp = run
    big = eval_pipeline(exp, n_episode=12, seed=5)
    small = eval_pipeline(exp, n_episode=2, seed=5)
    assert big["result_file"] != small["result_file"]
    assert os.path.basename(small["result_file"]).endswith("_seed5_episodes2.json")
    for r in (big, small):
        with open(r["result_file"]) as f:
            saved = json.load(f)
        assert saved["n_episode"] == r["n_episode"] and saved["returns"] == r["returns"]
