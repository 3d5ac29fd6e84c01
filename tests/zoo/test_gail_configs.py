"""Smoke tests of the zoo's GAIL configs: each runs a few hundred env steps through the reward-model pipeline
on a small demonstration dataset of its env (random actions, discrete and continuous: the test is about the wiring; learning is
tests/algo/test_gail_cartpole.py's and the measurements' job). CartPole's GAIL runs as
docs/pipelines/demonstrations.md's command on an expert's dataset, checked by tests/docs."""

from __future__ import annotations

import copy

import pytest

pytest.importorskip("minari")

from stride.entry import serial_pipeline_reward_model  # noqa: E402
from stride.entry.utils import zoo_config, zoo_policies  # noqa: E402
from tests.zoo.demo_helpers import random_demo  # noqa: E402

pytestmark = pytest.mark.timeout(240)


@pytest.mark.parametrize("env_name, algo, env_id", [("lunarlander", "dqn_gail", "LunarLander-v3"),
                                                   ("pendulum", "sac_gail", "Pendulum-v1")])
def test_gail_config_runs_a_few_hundred_steps(env_name, algo, env_id, tmp_path):
    if env_name == "lunarlander":
        pytest.importorskip("Box2D", reason="LunarLander needs the box2d extra")
    assert algo in zoo_policies(env_name)
    main, create = copy.deepcopy(zoo_config(env_name, algo))
    assert create["reward_model"]["type"] == "gail" and main["policy"].get("nstep", 1) == 1
    main["reward_model"]["data_path"] = random_demo(env_id, str(tmp_path / "demo"))
    main["env"].update(collector_env_num=2, evaluator_env_num=1, n_evaluator_episode=1, max_episode_steps=50,
                       stop_value=1e6)  # never reached: the run goes to its env-step limit
    main["policy"]["eval"]["evaluator"].update(eval_freq_envstep=200, confirm_episode=0)
    main["policy"]["other"]["replay_buffer"]["replay_buffer_size"] = 1000
    main["policy"]["random_collect_size"] = min(main["policy"].get("random_collect_size", 0), 100)
    out = serial_pipeline_reward_model([main, create], seed=0, max_env_step=300, exp_name=str(tmp_path / "run"),
                                       progress=False)
    assert out.result["env_step"] >= 300 and out.result["train_iter"] > 0
