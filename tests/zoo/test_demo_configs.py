"""Smoke tests of the zoo's BC and SQIL configs: each trains briefly on a small demonstration dataset of
its env (random actions: the test is about the wiring -- zoo lookup, model, data path, units; learning
is the entry and policy tests' and the measurements' job). CartPole's BC and SQIL run as
docs/pipelines/demonstrations.md's commands on an expert's dataset, checked by tests/docs."""

from __future__ import annotations

import copy

import pytest

pytest.importorskip("minari")

from stride.entry import serial_pipeline, serial_pipeline_offline  # noqa: E402
from stride.entry.utils import zoo_config, zoo_policies  # noqa: E402
from tests.zoo.demo_helpers import random_demo  # noqa: E402

pytestmark = pytest.mark.timeout(240)


def _small(main, data_path):
    main["policy"]["collect"]["data_path"] = data_path
    main["env"].update(evaluator_env_num=1, n_evaluator_episode=1, max_episode_steps=50, stop_value=1e6)
    main["policy"]["other"]["replay_buffer"]["replay_buffer_size"] = 1000
    return main


@pytest.mark.parametrize("env_name, env_id", [("pendulum", "Pendulum-v1")])
def test_bc_config_trains_offline(env_name, env_id, tmp_path):
    assert "bc" in zoo_policies(env_name)
    main, create = copy.deepcopy(zoo_config(env_name, "bc"))
    main = _small(main, random_demo(env_id, str(tmp_path / "demo")))
    main["policy"]["eval"]["evaluator"].update(eval_freq=20, confirm_episode=0)
    main["policy"]["learn"]["batch_size"] = 16  # (2 random episodes: short)
    out = serial_pipeline_offline([main, create], seed=0, max_train_iter=50, exp_name=str(tmp_path / "run"),
                                  progress=False)
    assert out.result["train_iter"] == 50 and out.result["env_step"] == 0
    assert out.result["dataset"]["episodes"] == 2 and out.result["dataset"]["transitions"] >= 16


@pytest.mark.parametrize("env_name, algo, env_id", [("lunarlander", "sqil", "LunarLander-v3"),
                                                   ("pendulum", "sqil_sac", "Pendulum-v1")])
def test_sqil_config_runs_a_few_hundred_steps(env_name, algo, env_id, tmp_path):
    if env_name == "lunarlander":
        pytest.importorskip("Box2D", reason="LunarLander needs the box2d extra")
    assert algo in zoo_policies(env_name)
    main, create = copy.deepcopy(zoo_config(env_name, algo))
    main = _small(main, random_demo(env_id, str(tmp_path / "demo")))
    main["env"]["collector_env_num"] = 2
    main["policy"]["random_collect_size"] = min(main["policy"].get("random_collect_size", 0), 100)
    main["policy"]["eval"]["evaluator"].update(eval_freq_envstep=200, confirm_episode=0)
    out = serial_pipeline([main, create], seed=0, max_env_step=300, exp_name=str(tmp_path / "run"), progress=False)
    assert out.result["env_step"] >= 300 and out.result["train_iter"] > 0
