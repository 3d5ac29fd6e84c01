"""stride.policy.BCPolicy: the losses against hand-computed numbers, action units (a demonstration in
the env's units is learnt in [-1, 1], handed out in the env's), learning a fixed labelling, bad config."""

from __future__ import annotations

import copy
import math

import gymnasium as gym
import numpy as np
import pytest
import torch

from stride.config import compile_config
from stride.envs.base_env import BaseEnvTimestep
from stride.policy import BCPolicy
from stride.policy.bc import bc_continuous_loss, bc_discrete_loss
from stride.utils.errors import ConfigError
from stride.zoo.cartpole.config import cartpole_bc_config as cartpole
from stride.zoo.pendulum.config import pendulum_bc_config as pendulum


def make_policy(module, seed: int = 0, **learn) -> BCPolicy:
    main = copy.deepcopy(module.main_config)
    main["policy"]["learn"].update(**learn)
    cfg = compile_config(main, create_cfg=copy.deepcopy(module.create_config), save_cfg=False,
                         action_space=gym.make(module.main_config["env"]["env_id"]).action_space)
    torch.manual_seed(seed)
    return BCPolicy(cfg.policy)


def test_cross_entropy_by_hand():
    logit = torch.tensor([[1.0, 2.0], [0.0, 0.0]])
    action = torch.tensor([1, 0])
    # -log softmax: row 0, action 1: log(1 + e^-1); row 1: log 2
    want = (math.log(1 + math.exp(-1)) + math.log(2)) / 2
    assert bc_discrete_loss(logit, action).item() == pytest.approx(want, abs=1e-6)


def test_continuous_losses_by_hand():
    out = {"mu": torch.tensor([[0.0], [math.atanh(0.5)]]), "sigma": torch.tensor([[1.0], [2.0]])}
    action = torch.tensor([[0.5], [0.5]])
    # mse: tanh(mu) = [0, 0.5] against [0.5, 0.5]
    assert bc_continuous_loss(out, action, "mse").item() == pytest.approx(0.125, abs=1e-6)
    # nll of u = atanh(a): row 0: u = atanh(0.5), N(0, 1); row 1: u = mu, N(mu, 2)
    u = math.atanh(0.5)
    row0 = 0.5 * u * u + 0.5 * math.log(2 * math.pi)
    row1 = math.log(2.0) + 0.5 * math.log(2 * math.pi)
    assert bc_continuous_loss(out, action, "gaussian_nll").item() == pytest.approx((row0 + row1) / 2, abs=1e-5)
    # a regression actor (an action, no Gaussian): mse on the action itself; nll refused
    assert bc_continuous_loss({"action": torch.tensor([[0.1], [0.5]])}, action, "mse").item() == \
        pytest.approx(0.08, abs=1e-6)
    with pytest.raises(ConfigError, match="reparameterization"):
        bc_continuous_loss({"action": torch.zeros(2, 1)}, action, "gaussian_nll")


def test_continuous_actions_learnt_in_unit_range_and_handed_out_in_env_units():
    policy = make_policy(pendulum)
    ts = BaseEnvTimestep(np.zeros(3, np.float32), -1.0, False, {})
    sample = policy.collect_mode.process_transition(np.zeros(3, np.float32), {"action": np.array([1.0], np.float32)}, ts)
    np.testing.assert_allclose(sample["action"], [0.5])  # 1.0 of Pendulum's [-2, 2]
    obs = {i: np.random.default_rng(i).normal(size=3).astype(np.float32) for i in range(4)}
    out = policy.eval_mode.forward(obs)
    with torch.no_grad():
        mu = policy.model.forward(torch.as_tensor(np.stack(list(obs.values()))), mode="compute_actor")["mu"]
    np.testing.assert_allclose(np.stack([o["action"] for o in out.values()]), 2 * torch.tanh(mu).numpy(), atol=1e-6)


@pytest.mark.parametrize("loss_type", ["mse", "gaussian_nll"])
def test_continuous_bc_fits_a_linear_expert(loss_type):
    policy = make_policy(pendulum, batch_size=64, learning_rate=3e-3, loss_type=loss_type)
    rng = np.random.default_rng(0)
    obs = rng.uniform(-1, 1, size=(256, 3)).astype(np.float32)
    action = np.clip(obs[:, :1] - 0.5 * obs[:, 2:], -0.9, 0.9)  # in [-1, 1]: what process_transition stores
    for _ in range(800):
        idx = rng.integers(0, 256, 64)
        policy.learn_mode.forward({"obs": obs[idx], "action": action[idx]})
    with torch.no_grad():
        pred = torch.tanh(policy.model.forward(torch.as_tensor(obs), mode="compute_actor")["mu"]).numpy()
    assert np.abs(pred - action).mean() < 0.1


def test_discrete_bc_learns_a_labelling_and_only_the_model_it_names():
    policy = make_policy(cartpole, batch_size=64, learning_rate=3e-3)
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(512, 4)).astype(np.float32)
    action = (obs[:, 2] + 0.5 * obs[:, 3] > 0).astype(np.int64)
    first = policy.learn_mode.forward({"obs": obs[:64], "action": action[:64]})
    for _ in range(300):
        idx = rng.integers(0, 512, 64)
        last = policy.learn_mode.forward({"obs": obs[idx], "action": action[idx]})
    assert last["total_loss"] < first["total_loss"] / 3 and last["accuracy"] > 0.9
    greedy = policy.eval_mode.forward(dict(enumerate(obs[:100])))
    assert np.mean([greedy[i]["action"] == action[i] for i in range(100)]) > 0.9


def test_continuous_needs_an_actor():
    main = copy.deepcopy(cartpole.main_config)
    main["policy"]["continuous"] = True
    cfg = compile_config(main, create_cfg=copy.deepcopy(cartpole.create_config), save_cfg=False)
    with pytest.raises(ConfigError, match="model=dict\\(type='qac'\\)"):
        BCPolicy(cfg.policy)


def test_continuous_trains_the_actor_only():
    policy = make_policy(pendulum)
    critic = {k: v.clone() for k, v in policy.model.critic.state_dict().items()}
    actor = {k: v.clone() for k, v in policy.model.actor.state_dict().items()}
    policy.learn_mode.forward({"obs": np.ones((8, 3), np.float32), "action": np.full((8, 1), 0.5, np.float32)})
    assert all(torch.equal(v, policy.model.critic.state_dict()[k]) for k, v in critic.items())
    assert not all(torch.equal(v, policy.model.actor.state_dict()[k]) for k, v in actor.items())
