"""The IMPALA zoo configs from the command, a few hundred env steps each: CartPole, and MinAtar
Breakout with its conv encoder (needs ``minatar``, extra ``[minatar]``; skipped without it)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from stride.entry import serial_pipeline
from stride.entry.cli import main as cli_main
from stride.entry.utils import zoo_config
from stride.model.common import MinAtarEncoder
from stride.policy import IMPALAPolicy


def test_the_command_runs_the_cartpole_impala_config(tmp_path, capsys):
    rc = cli_main(["-m", "serial", "-e", "cartpole", "-p", "impala", "-s", "0", "--env-step", "300",
                   "--set", "env.n_evaluator_episode=1", "--exp-name", str(tmp_path / "cli"), "--no-progress"])
    assert rc == 0, capsys.readouterr()
    result = json.loads((tmp_path / "cli" / "result.json").read_text())
    assert result["env_step"] >= 300 and result["train_iter"] > 0
    saved = json.loads((tmp_path / "cli" / "total_config.json").read_text())
    assert saved["policy"]["type"] == "impala" and saved["policy"]["other"]["replay_buffer"]["max_use"] == 16


@pytest.mark.skipif(importlib.util.find_spec("minatar") is None,
                    reason='MinAtar smoke tests need minatar: pip install -c constraints.txt -e ".[minatar]"')
def test_the_minatar_breakout_impala_config_trains_with_the_conv_encoder(tmp_path):
    main, create = zoo_config("minatar_breakout", "impala")
    main = {**main, "env": {**main["env"], "n_evaluator_episode": 1, "evaluator_env_num": 1}}
    policy = serial_pipeline([main, create], seed=0, max_env_step=400, exp_name=str(tmp_path / "run"), progress=False)
    assert isinstance(policy, IMPALAPolicy)
    assert any(isinstance(m, MinAtarEncoder) for m in policy.model.modules())
    assert policy.result["env_step"] >= 400 and policy.result["train_iter"] > 0
