"""Smoke tests of the LunarLander zoo configs (needs the ``box2d`` extra): each runs a few hundred env
steps through its pipeline with its env and model wired as the config says, sizes cut. Learning to 200
is benchmarks/learning's job (``--cases lunarlander_dqn lunarlander_ppo``), too slow for CI."""

from __future__ import annotations

import copy

import pytest
import torch

pytest.importorskip("Box2D", reason="LunarLander needs the box2d extra: pip install 'stride-rl[box2d]'")

from stride.entry import serial_pipeline, serial_pipeline_onpolicy  # noqa: E402
from stride.entry.utils import zoo_config, zoo_policies  # noqa: E402

pytestmark = pytest.mark.timeout(240)


def test_the_zoo_lists_them():
    assert {"dqn", "ppo"} <= set(zoo_policies("lunarlander"))


@pytest.mark.parametrize("algo", ["dqn", "ppo"])
def test_config_runs_a_few_hundred_steps(algo, tmp_path):
    main, create = copy.deepcopy(zoo_config("lunarlander", algo))
    assert main["env"]["env_id"] == "LunarLander-v3" and main["env"]["stop_value"] == 200
    main["env"].update(evaluator_env_num=1, n_evaluator_episode=1, max_episode_steps=50)
    policy = main["policy"]
    policy["eval"]["evaluator"].update(eval_freq_envstep=200, confirm_episode=0)
    if algo == "ppo":
        policy["collect"]["n_sample"] = 128
        policy["learn"].update(epoch_per_collect=1)
        run = serial_pipeline_onpolicy
    else:
        policy["other"]["replay_buffer"]["replay_buffer_size"] = 1000
        run = serial_pipeline
    out = run([main, create], seed=0, max_env_step=300, exp_name=str(tmp_path / "run"), progress=False)
    assert out.result["env_step"] >= 300 and out.result["train_iter"] > 0
    linears = [m for m in out.model.modules() if isinstance(m, torch.nn.Linear)]
    assert linears[0].in_features == 8  # LunarLander's observation
    assert {m.out_features for m in linears} >= {4}  # its four discrete actions (logits or Q-values)
