"""stride.policy.SQILPolicy: the soft Q target by hand, rewards 1 (demonstrations) / 0 (own steps)
whatever the env says, and through serial_pipeline: every learner batch is half expert (reward 1),
half agent (reward 0) -- the env's reward never reaches the learner -- and CartPole is learnt."""

from __future__ import annotations

import copy
import math

import gymnasium as gym
import numpy as np
import pytest
import torch

from stride.config import compile_config
from stride.envs.base_env import BaseEnvTimestep
from stride.policy import SQILPolicy
from stride.policy.sqil import soft_q_target
from stride.zoo.cartpole.config import cartpole_sqil_config as cartpole


def test_soft_q_target_by_hand():
    next_q = torch.tensor([[1.0, 2.0], [1.0, 2.0]])
    # alpha 0.5: V = 0.5 * log(e^2 + e^4) = 2 + 0.5 * log(1 + e^-2)
    v = 2 + 0.5 * math.log(1 + math.exp(-2))
    got = soft_q_target(next_q, torch.tensor([1.0, 0.0]), torch.tensor([False, True]), 0.9, 0.5)
    np.testing.assert_allclose(got.numpy(), [1 + 0.9 * v, 0.0], rtol=1e-6)
    # alpha -> 0: the hard max of Q-learning
    assert soft_q_target(next_q, torch.zeros(2), torch.zeros(2), 1.0, 1e-3)[0].item() == pytest.approx(2.0, abs=1e-2)


def test_rewards_are_one_for_demonstrations_and_zero_for_own_steps():
    main = copy.deepcopy(cartpole.main_config)
    policy = SQILPolicy(compile_config(main, copy.deepcopy(cartpole.create_config), save_cfg=False).policy)
    obs = np.zeros(4, np.float32)
    own = policy.collect_mode.process_transition(obs, {"action": 1}, BaseEnvTimestep(obs, 5.0, False, {}))
    demo = policy.collect_mode.process_transition(obs, {"action": 1}, BaseEnvTimestep(obs, 5.0, True,
                                                                                     {"demo": True, "terminated": True}))
    assert own["reward"] == 0.0 and demo["reward"] == 1.0 and demo["done"] and not own["done"]


def test_continuous_variant_keeps_sacs_unit_range_and_drops_the_env_reward():
    from stride.policy import SQILSACPolicy
    from stride.zoo.pendulum.config import pendulum_sqil_sac_config as pendulum

    main = copy.deepcopy(pendulum.main_config)
    pendulum_actions = gym.spaces.Box(-2.0, 2.0, (1,), np.float32)  # the env's: the policy acts in its units
    policy = SQILSACPolicy(compile_config(main, copy.deepcopy(pendulum.create_config), save_cfg=False,
                                          action_space=pendulum_actions).policy)
    obs = np.zeros(3, np.float32)
    own = policy.collect_mode.process_transition(obs, {"action": np.array([1.0], np.float32)},
                                                 BaseEnvTimestep(obs, -3.0, False, {}))
    demo = policy.collect_mode.process_transition(obs, {"action": np.array([-2.0], np.float32)},
                                                  BaseEnvTimestep(obs, -3.0, False, {"demo": True}))
    assert own["reward"] == 0.0 and demo["reward"] == 1.0
    np.testing.assert_allclose([own["action"][0], demo["action"][0]], [0.5, -1.0])  # Pendulum's [-2, 2] -> [-1, 1]


pytest.importorskip("minari")


def expert(obs: np.ndarray) -> int:
    return int(0.1 * obs[0] + 0.5 * obs[1] + 5.0 * obs[2] + obs[3] > 0)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> str:
    """4 expert episodes whose recorded rewards are 7 (not CartPole's 1): SQIL must ignore them."""
    from stride.data.demo import stack_episode, write_demo_dataset

    env = gym.make("CartPole-v1")
    episodes = []
    for k in range(4):
        obs, _ = env.reset(seed=k)
        steps, done = [], False
        while not done:
            a = expert(obs)
            nxt, _, terminated, truncated, _ = env.step(a)
            steps.append(dict(obs=obs, action=np.int64(a), reward=np.float32(7.0), next_obs=nxt,
                              terminated=terminated, truncated=truncated))
            obs, done = nxt, terminated or truncated
        episodes.append(stack_episode(steps))
    path = write_demo_dataset(str(tmp_path_factory.mktemp("demo") / "d"), episodes, env.observation_space,
                              env.action_space, env_id="CartPole-v1")
    env.close()
    return path


def config(data_path: str):
    main = copy.deepcopy(cartpole.main_config)
    main["env"].update(collector_env_num=4, evaluator_env_num=4, n_evaluator_episode=4)
    main["policy"]["collect"]["data_path"] = data_path
    main["policy"]["eval"]["evaluator"].update(confirm_episode=8)
    return main, copy.deepcopy(cartpole.create_config)


def test_learner_batches_carry_only_zero_one_rewards_half_and_half(dataset, tmp_path, monkeypatch):
    from stride.entry import serial_pipeline

    seen = []
    learn = SQILPolicy._forward_learn

    def spy(self, data):
        seen.append(np.asarray(data["reward"], dtype=np.float64).copy())
        return learn(self, data)

    monkeypatch.setattr(SQILPolicy, "_forward_learn", spy)
    serial_pipeline(config(dataset), seed=0, max_train_iter=20, exp_name=str(tmp_path / "s"), progress=False)
    assert len(seen) == 20
    for rewards in seen:
        assert set(np.unique(rewards).tolist()) <= {0.0, 1.0}
        assert rewards[:32].tolist() == [1.0] * 32 and rewards[32:].tolist() == [0.0] * 32


def test_sqil_learns_cartpole_from_four_expert_episodes(dataset, tmp_path):
    from stride.entry import serial_pipeline

    policy = serial_pipeline(config(dataset), seed=0, max_env_step=20_000, exp_name=str(tmp_path / "s"), progress=False)
    assert policy.result["stop"] and policy.result["eval_return"] >= 450


def test_resume_continues_exactly_with_the_demonstrations(dataset, tmp_path):
    from stride.entry import serial_pipeline
    from stride.worker.learner.learner import read_checkpoint

    main, create = config(dataset)
    main["env"]["stop_value"] = 1e9
    whole = serial_pipeline([main, create], seed=2, max_train_iter=40, exp_name=str(tmp_path / "w"), progress=False)
    half = serial_pipeline([main, create], seed=2, max_train_iter=20, exp_name=str(tmp_path / "h"), progress=False)
    resumed = serial_pipeline(None, max_train_iter=40, resume=half.result["exp_dir"], progress=False)
    a = read_checkpoint(whole.result["final_checkpoint"])["policy"]["model"]
    b = read_checkpoint(resumed.result["final_checkpoint"])["policy"]["model"]
    assert resumed.result["train_iter"] == 40 and all(torch.equal(a[k], b[k]) for k in a)
