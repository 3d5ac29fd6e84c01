"""GAIL: reward sign and scale, loss, features, estimate, training, exact state, and the learner's batches."""

from __future__ import annotations

import copy
import math
import os
from typing import Dict, List

import gymnasium as gym
import numpy as np
import pytest
import torch

pytest.importorskip("minari")

from stride.data.demo import write_demo_dataset  # noqa: E402
from stride.reward_model import GailRewardModel, create_reward_model  # noqa: E402
from stride.reward_model.gail import discriminator_loss, gail_reward  # noqa: E402
from stride.utils.errors import ConfigError  # noqa: E402

OBS = gym.spaces.Box(-10.0, 10.0, (2,), np.float32)
ACT = gym.spaces.Discrete(3)


def _dataset(path: str, actions=(0, 0, 0, 0), obs=((1.0, 2.0), (3.0, 2.0), (1.0, 2.0), (3.0, 2.0), (0.0, 0.0))) -> str:
    """One 4-step episode: obs column mean (2, 2), std (1, 0) -> the second feature is constant."""
    traj = np.asarray(obs, dtype=np.float32)
    n = len(actions)
    return write_demo_dataset(path, [{"obs": traj[:-1], "action": np.asarray(actions), "reward": np.ones(n, np.float32),
                                      "next_obs": traj[1:], "terminated": np.arange(n) == n - 1,
                                      "truncated": np.zeros(n, bool)}], OBS, ACT, env_id="CartPole-v1")


def _model(path: str, seed: int = 0, **cfg) -> GailRewardModel:
    model = create_reward_model(dict(type="gail", data_path=path, **cfg), seed=seed)
    assert isinstance(model, GailRewardModel)
    return model


def test_reward_sign_and_scale_by_hand():
    logit = torch.tensor([0.0, math.log(3.0), -math.log(3.0)])  # D = 0.5, 0.75, 0.25
    # 'positive': -log(1 - D): log 2, log 4, log(4/3) -- always > 0, larger the more expert-like
    np.testing.assert_allclose(gail_reward(logit, "positive").numpy(), [math.log(2), math.log(4), math.log(4 / 3)],
                               rtol=1e-6)
    # 'logit': log D - log(1 - D): 0, log 3, -log 3 -- the sign says which side D leans to
    np.testing.assert_allclose(gail_reward(logit, "logit").numpy(), [0.0, math.log(3), -math.log(3)], rtol=1e-6)
    # stable far out: softplus(-50) ~ e^-50, softplus(50) ~ 50 (log(D + 1e-8) would floor at 1e-8)
    np.testing.assert_allclose(gail_reward(torch.tensor([-50.0, 50.0]), "positive").numpy(), [math.exp(-50), 50.0],
                               rtol=1e-5)
    with pytest.raises(ConfigError, match="unknown reward_model.reward_type 'neg'; valid choices: positive, logit"):
        gail_reward(logit, "neg")


def test_discriminator_loss_by_hand():
    zero = torch.zeros(3)
    assert discriminator_loss(zero, zero).item() == pytest.approx(2 * math.log(2))
    # expert D = 0.75, agent D = 0.25: -log 0.75 - log(1 - 0.25)
    e, a = torch.full((2,), math.log(3)), torch.full((5,), -math.log(3))
    assert discriminator_loss(e, a).item() == pytest.approx(-2 * math.log(0.75), rel=1e-6)


def test_features_standardised_obs_and_one_hot_actions(tmp_path):
    model = _model(_dataset(str(tmp_path / "d")), hidden_size_list=[])  # one linear layer: logit = w . x + b
    layer = model.discriminator[0]
    assert layer.in_features == 2 + 3  # 2 obs features + one-hot of 3 actions
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[1.0, 10.0, 0.5, -1.0, 2.0]]))
        layer.bias.fill_(0.25)
    # obs (4, 7): ((4 - 2) / 1, 7 - 2) = (2, 5) (constant expert feature: not scaled); action 2 -> (0, 0, 1)
    # logit = 2 + 50 + 2 + 0.25 = 54.25; obs (2, 2), action 1: 0 + 0 - 1 + 0.25 = -0.75
    got = model.reward(np.array([[4.0, 7.0], [2.0, 2.0]], np.float32), np.array([2, 1]))
    np.testing.assert_allclose(got, [54.25, math.log1p(math.exp(-0.75))], rtol=1e-5)
    with pytest.raises(ValueError, match="actions outside"):
        model.reward(np.zeros((1, 2), np.float32), np.array([3]))
    nxt = _model(str(tmp_path / "d"), hidden_size_list=[], input="obs_next_obs")
    assert nxt.discriminator[0].in_features == 4  # obs and next obs, no action


def test_estimate_replaces_the_reward_and_leaves_the_batch_alone(tmp_path):
    model = _model(_dataset(str(tmp_path / "d")))
    obs = np.array([[1.0, 2.0], [3.0, 2.0], [0.0, 1.0]], np.float32)
    batch = {"obs": obs, "action": np.array([0, 1, 2]), "reward": np.ones(3, np.float32), "next_obs": obs,
             "done": np.zeros(3, bool), "replay_unique_id": ["a", "b", "c"]}
    out = model.estimate(batch)
    assert isinstance(out, dict) and out is not batch
    want = model.reward(obs, np.array([0, 1, 2]))
    np.testing.assert_array_equal(out["reward"], want)
    assert out["reward"].dtype == np.float32 and (out["reward"] > 0).all() and not (out["reward"] == 1.0).any()
    np.testing.assert_array_equal(batch["reward"], np.ones(3))  # the buffer's copy keeps the env's reward
    assert out["replay_unique_id"] == ["a", "b", "c"] and out["obs"] is obs
    rows = [{"obs": obs[i], "action": i, "reward": 1.0, "next_obs": obs[i], "done": False} for i in range(3)]
    listed = model.estimate(rows)
    assert isinstance(listed, list) and [r["reward"] for r in rows] == [1.0] * 3
    np.testing.assert_allclose([r["reward"] for r in listed], want, rtol=1e-6)
    with pytest.raises(ConfigError, match="use an off-policy learner with policy.nstep=1"):
        model.estimate([dict(rows[0], adv=0.3)])
    with pytest.raises(ConfigError, match="n-step 'value_gamma'"):
        model.estimate(dict(batch, value_gamma=np.ones(3)))


def test_training_tells_expert_from_agent(tmp_path):
    model = _model(_dataset(str(tmp_path / "d")), seed=0, update_per_collect=200, batch_size=16)
    obs = np.array([[1.0, 2.0], [3.0, 2.0]], np.float32)
    model.train()  # no agent data yet: nothing to learn from
    assert math.isnan(model.last_loss)
    model.collect_data([{"obs": o, "action": 2, "next_obs": o} for o in obs])  # the agent takes action 2
    model.train()
    assert model.last_loss < 0.1
    expert, agent = model.reward(obs, np.array([0, 0])), model.reward(obs, np.array([2, 2]))
    assert (expert > 2.0).all() and (agent < 0.1).all()


def test_agent_window_keeps_the_latest_rows(tmp_path):
    model = _model(_dataset(str(tmp_path / "d")), agent_buffer_size=3)
    for k in range(5):
        model.collect_data([{"obs": np.array([float(k), 0.0], np.float32), "action": 0, "next_obs": None}])
    window = model.state_dict()["agent"]
    assert isinstance(window, torch.Tensor) and window.shape == (3, 5)
    # rows of obs 3, 4 overwrote 0, 1 in the ring (obs standardised: (k - 2) / 1)
    assert sorted(window[:, 0].tolist()) == [0.0, 1.0, 2.0]
    model.clear_data()
    assert model.state_dict()["agent"].shape == (0, 5)


def test_state_dict_resumes_exactly(tmp_path):
    path = _dataset(str(tmp_path / "d"))
    data = [{"obs": np.array([float(i % 3), 1.0], np.float32), "action": i % 3, "next_obs": None} for i in range(20)]
    a = _model(path, seed=3, update_per_collect=3, batch_size=4)
    a.collect_data(data)
    a.train()
    b = _model(path, seed=99, update_per_collect=3, batch_size=4)  # another seed: only the state makes it equal
    b.load_state_dict(copy.deepcopy(a.state_dict()))
    for m in (a, b):
        m.collect_data(data[:7])
        m.train()
    sa, sb = a.state_dict(), b.state_dict()
    assert all(torch.equal(sa["net"][k], sb["net"][k]) for k in sa["net"])
    assert torch.equal(sa["agent"], sb["agent"]) and sa["rng"] == sb["rng"]


def test_config_errors_are_one_line(tmp_path):
    from stride.config import compile_config
    from stride.envs import GymnasiumEnv
    from stride.zoo.cartpole.config.cartpole_dqn_gail_config import create_config, main_config

    main = copy.deepcopy(main_config)
    del main["reward_model"]["data_path"]
    with pytest.raises(ConfigError, match="missing required config key.*reward_model.data_path"):
        compile_config(main, create_config, save_cfg=False)
    main["reward_model"]["input"] = "obs"
    with pytest.raises(ConfigError, match="reward_model.input"):
        compile_config(main, create_config, save_cfg=False)
    with pytest.raises(ConfigError, match="demonstration dataset '.*nowhere' not found"):
        _model(str(tmp_path / "nowhere"))
    path = _dataset(str(tmp_path / "d"))
    env = GymnasiumEnv("Acrobot-v1")
    try:
        with pytest.raises(ConfigError, match="recorded on env 'CartPole-v1', this run's env is 'Acrobot-v1'"):
            create_reward_model(dict(type="gail", data_path=path), env=env, seed=0)
    finally:
        env.close()


def test_the_learner_sees_only_the_discriminators_reward(tmp_path, monkeypatch):
    """CartPole's reward is 1 on every step: not one learner batch may carry it, and the last
    collect's batches carry exactly what the final discriminator gives."""
    from stride.entry import serial_pipeline_reward_model
    from stride.worker import BaseLearner
    from stride.zoo.cartpole.config.cartpole_dqn_gail_config import create_config, main_config

    rng = np.random.default_rng(0)
    n = 30
    traj = rng.uniform(-0.05, 0.05, (n + 1, 4)).astype(np.float32)
    end = np.arange(n) == n - 1
    space = gym.make("CartPole-v1").observation_space
    path = write_demo_dataset(str(tmp_path / "expert"), [{"obs": traj[:-1], "action": rng.integers(0, 2, n),
                                                          "reward": np.ones(n, np.float32), "next_obs": traj[1:],
                                                          "terminated": end, "truncated": np.zeros(n, bool)}],
                              space, gym.spaces.Discrete(2), env_id="CartPole-v1")
    seen: List[Dict[str, np.ndarray]] = []
    train = BaseLearner.train

    def spy(self, data, envstep=None):
        seen.append({k: np.array(data[k]) for k in ("obs", "action", "reward")})
        return train(self, data, envstep)

    monkeypatch.setattr(BaseLearner, "train", spy)
    main = copy.deepcopy(main_config)
    main["env"].update(collector_env_num=2, evaluator_env_num=2)
    main["policy"]["learn"].update(update_per_collect=2, batch_size=16)
    main["policy"]["eval"]["evaluator"]["eval_freq_envstep"] = 100_000
    main["reward_model"].update(data_path=path, batch_size=8)
    policy = serial_pipeline_reward_model([main, copy.deepcopy(create_config)], seed=0, max_train_iter=10,
                                          exp_name=str(tmp_path / "run"), progress=False)
    assert len(seen) == 10
    assert all((b["reward"] != 1.0).all() and (b["reward"] > 0).all() for b in seen)
    ckpt = torch.load(policy.result["final_checkpoint"], weights_only=True)
    final = _model(path)
    final.load_state_dict(ckpt["components"]["reward_model"])
    for b in seen[-2:]:  # estimated after the last collect's discriminator step
        np.testing.assert_array_equal(b["reward"], final.reward(b["obs"], b["action"]))
    assert os.path.isdir(path)


def test_continuous_actions_meet_in_the_same_units(tmp_path):
    """The dataset holds torques in the env's [-2, 2]; SAC's replay holds them in [-1, 1] ('unit_range')."""
    act = gym.spaces.Box(-2.0, 2.0, (1,), np.float32)
    traj = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]], np.float32)
    path = write_demo_dataset(str(tmp_path / "d"), [{"obs": traj[:-1], "action": np.array([[2.0], [-1.0]], np.float32),
                                                     "reward": np.zeros(2, np.float32), "next_obs": traj[1:],
                                                     "terminated": np.array([False, True]),
                                                     "truncated": np.zeros(2, bool)}], OBS, act)
    obs = np.array([[0.5, 1.0]], np.float32)  # the expert obs mean: standardised to 0
    for agent_actions, torque in (("env_units", 1.0), ("unit_range", 0.5)):
        model = _model(path, hidden_size_list=[], agent_actions=agent_actions)
        with torch.no_grad():
            model.discriminator[0].weight.copy_(torch.tensor([[0.0, 0.0, 3.0]]))  # logit = 3 * scaled action
            model.discriminator[0].bias.zero_()
        # a torque of 1 N m is 0.5 in [-1, 1] either way: logit 1.5, reward softplus(1.5)
        np.testing.assert_allclose(model.reward(obs, np.array([[torque]], np.float32)), [math.log1p(math.exp(1.5))],
                                   rtol=1e-6)
    # in the env's units (the dataset's, scaled as the expert's rows are): 2 -> 1, -1 -> -0.5
    model = _model(path, hidden_size_list=[], agent_actions="env_units")
    with torch.no_grad():
        model.discriminator[0].weight.copy_(torch.tensor([[0.0, 0.0, 3.0]]))
        model.discriminator[0].bias.zero_()
    np.testing.assert_allclose(model.reward(np.repeat(obs, 2, 0), np.array([[2.0], [-1.0]], np.float32), None),
                               [math.log1p(math.exp(3.0)), math.log1p(math.exp(-1.5))], rtol=1e-6)
