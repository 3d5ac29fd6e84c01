"""Smoke tests of the zoo's GAIL configs: each runs a few hundred env steps through the reward-model pipeline
on a small demonstration dataset of its env (random actions, discrete and continuous: the test is about the wiring; learning is
tests/algo/test_gail_cartpole.py's and the measurements' job)."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("minari")

from stride.data.demo import write_demo_dataset  # noqa: E402
from stride.entry import serial_pipeline_reward_model  # noqa: E402
from stride.entry.utils import zoo_config, zoo_policies  # noqa: E402

pytestmark = pytest.mark.timeout(240)


def _random_demo(env_id: str, path: str, episodes: int = 2, max_steps: int = 50) -> str:
    env = gym.make(env_id, max_episode_steps=max_steps)
    env.action_space.seed(0)
    eps = []
    for k in range(episodes):
        obs, _ = env.reset(seed=k)
        rows = []
        while True:
            action = env.action_space.sample()
            nxt, reward, terminated, truncated, _ = env.step(action)
            rows.append({"obs": obs, "action": action, "reward": float(reward), "next_obs": nxt,
                         "terminated": terminated, "truncated": truncated})
            obs = nxt
            if terminated or truncated:
                break
        eps.append({key: np.stack([np.asarray(r[key]) for r in rows]) for key in rows[0]})
    out = write_demo_dataset(path, eps, env.observation_space, env.action_space, env_id=env_id)
    env.close()
    return out


@pytest.mark.parametrize("env_name, algo, env_id", [("cartpole", "dqn_gail", "CartPole-v1"),
                                                   ("lunarlander", "dqn_gail", "LunarLander-v3"),
                                                   ("pendulum", "sac_gail", "Pendulum-v1")])
def test_gail_config_runs_a_few_hundred_steps(env_name, algo, env_id, tmp_path):
    if env_name == "lunarlander":
        pytest.importorskip("Box2D", reason="LunarLander needs the box2d extra")
    assert algo in zoo_policies(env_name)
    main, create = copy.deepcopy(zoo_config(env_name, algo))
    assert create["reward_model"]["type"] == "gail" and main["policy"].get("nstep", 1) == 1
    main["reward_model"]["data_path"] = _random_demo(env_id, str(tmp_path / "demo"))
    main["env"].update(collector_env_num=2, evaluator_env_num=1, n_evaluator_episode=1, max_episode_steps=50,
                       stop_value=1e6)  # never reached: the run goes to its env-step limit
    main["policy"]["eval"]["evaluator"].update(eval_freq_envstep=200, confirm_episode=0)
    main["policy"]["other"]["replay_buffer"]["replay_buffer_size"] = 1000
    main["policy"]["random_collect_size"] = min(main["policy"].get("random_collect_size", 0), 100)
    out = serial_pipeline_reward_model([main, create], seed=0, max_env_step=300, exp_name=str(tmp_path / "run"),
                                       progress=False)
    assert out.result["env_step"] >= 300 and out.result["train_iter"] > 0
