"""stride.policy.TD3Policy: twin critics, target policy smoothing bounds, delayed actor/target
update counts, losses on fixed batches, state_dict round trip (incl. the delay counter)."""

from __future__ import annotations

import copy
import io

import gymnasium as gym
import numpy as np
import pytest
import torch

from stride.config import compile_config
from stride.policy import DDPGPolicy, TD3Policy
from stride.zoo.pendulum.config.pendulum_td3_config import create_config, main_config

OBS, ACT = 3, 1
ACTIONS = gym.spaces.Box(-2.0, 2.0, (ACT,), np.float32)  # Pendulum's: the policy acts in its units


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def make_policy(seed: int = 0, **learn) -> TD3Policy:
    main = copy.deepcopy(main_config)
    main["policy"]["model"].update(actor_hidden_size_list=[32, 32], critic_hidden_size_list=[32, 32])
    main["policy"]["learn"].update(batch_size=16, **learn)
    cfg = compile_config(main, create_cfg=create_config, save_cfg=False, action_space=ACTIONS)
    torch.manual_seed(seed)
    return TD3Policy(cfg.policy)


def make_columns(n: int = 32, seed: int = 0, done=None) -> dict:
    rng = np.random.default_rng(seed)
    done = rng.random(n) < 0.2 if done is None else done
    return {"obs": rng.standard_normal((n, OBS)).astype(np.float32),
            "action": rng.uniform(-1, 1, (n, ACT)).astype(np.float32),
            "reward": rng.standard_normal(n).astype(np.float32),
            "next_obs": rng.standard_normal((n, OBS)).astype(np.float32), "done": np.asarray(done),
            "value_gamma": np.full(n, 0.99, dtype=np.float32)}


def params(module) -> list:
    return [p.detach().clone() for p in module.parameters()]


def same(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b))


def test_defaults_turn_on_the_three_td3_fixes():
    cfg = TD3Policy.default_config()
    assert cfg.type == "td3" and issubclass(TD3Policy, DDPGPolicy)
    assert cfg.model.twin_critic is True and cfg.learn.actor_update_freq == 2 and cfg.learn.noise is True
    assert cfg.learn.noise_sigma == 0.2 and dict(cfg.learn.noise_range) == {"min": -0.5, "max": 0.5}
    assert make_policy().model.critic.twin


def test_target_policy_smoothing_stays_within_noise_clip_and_action_bounds():
    p = make_policy(noise_sigma=5.0)  # huge sigma: the noise clip must bind
    obs = torch.randn(2000, OBS)
    with torch.no_grad():
        clean = p._target.forward(obs, mode="compute_actor")["action"]
        smoothed = p._target_model.forward(obs, mode="compute_actor")["action"]
    assert (smoothed - clean).abs().max() <= 0.5 + 1e-6
    assert smoothed.abs().max() <= 1.0
    assert ((smoothed - clean).abs() > 0.4).float().mean() > 0.5  # mostly at the clip, so not a no-op
    # the critic pass through the same wrapper is untouched
    q = p._target_model.forward({"obs": obs[:4], "action": clean[:4]}, mode="compute_critic")["q_value"]
    assert torch.equal(q, p._target.forward({"obs": obs[:4], "action": clean[:4]}, mode="compute_critic")["q_value"])


def test_actor_and_targets_update_every_second_step(monkeypatch):
    p = make_policy()
    counts = {"actor": 0, "critic": 0, "target": 0}
    names = {id(p._actor_optimizer): "actor", id(p._critic_optimizer): "critic"}
    import stride.torch_utils.replica_sync as base_module  # every policy steps through optimise

    real_step = base_module.step

    def counted(opt):
        counts[names[id(opt)]] += 1
        return real_step(opt)

    monkeypatch.setattr(base_module, "step", counted)
    update = p._target.update

    def counted_update(*a, **k):
        counts["target"] += 1
        return update(*a, **k)

    p._target.update = counted_update
    batch = make_columns()
    actor0, target0 = params(p.model.actor), params(p._target.unwrapped())
    p.learn_mode.forward(batch)
    assert same(actor0, params(p.model.actor)) and same(target0, params(p._target.unwrapped()))
    p.learn_mode.forward(batch)
    assert not same(actor0, params(p.model.actor)) and not same(target0, params(p._target.unwrapped()))
    for _ in range(8):
        p.learn_mode.forward(batch)
    assert counts == {"actor": 5, "critic": 10, "target": 5}


def test_twin_critic_target_uses_the_min():
    p = make_policy(noise_sigma=1e-12)
    batch = make_columns(8, done=np.zeros(8, bool))
    nobs = torch.as_tensor(batch["next_obs"])
    with torch.no_grad():
        a = p._target.forward(nobs, mode="compute_actor")["action"]
        q2 = p._target.forward({"obs": nobs, "action": a}, mode="compute_critic")["q_value"]
        q = p.model({"obs": torch.as_tensor(batch["obs"]), "action": torch.as_tensor(batch["action"])},
                    mode="compute_critic")["q_value"]
    target = torch.as_tensor(batch["reward"]) + 0.99 * q2.min(0).values
    expected = (0.5 * (q - target) ** 2).mean(-1).sum().item()
    assert p.learn_mode.forward(batch)["critic_loss"] == pytest.approx(expected, rel=1e-5)


def test_critic_loss_decreases_on_a_fixed_batch():
    p = make_policy(learning_rate_critic=1e-2)
    batch = make_columns(64, done=np.ones(64, bool))  # targets = rewards: a plain regression
    batch["reward"] = batch["obs"].sum(1) + batch["action"][:, 0]  # a learnable function of (s, a)
    losses = [p.learn_mode.forward(batch)["critic_loss"] for _ in range(40)]
    assert np.mean(losses[-5:]) < 0.3 * np.mean(losses[:5])


def test_collect_and_eval_actions():
    p = make_policy()
    obs = {0: np.zeros(OBS, np.float32), 1: np.ones(OBS, np.float32)}
    out = p.collect_mode.forward(obs)
    assert out[0]["action"].shape == (ACT,) and np.abs(out[0]["action"]).max() <= 1.0
    e1, e2 = p.eval_mode.forward(obs), p.eval_mode.forward(obs)
    assert np.array_equal(e1[1]["action"], e2[1]["action"])


def test_state_dict_round_trip_keeps_the_delay_phase():
    a = make_policy(seed=0)
    batch = make_columns()
    a.learn_mode.forward(batch)  # odd step: the next step updates the actor
    buf = io.BytesIO()
    torch.save(a.learn_mode.state_dict(), buf)
    buf.seek(0)
    b = make_policy(seed=3)
    b.learn_mode.load_state_dict(torch.load(buf, weights_only=True))
    for p in (a, b):
        torch.manual_seed(1)
        p.learn_mode.forward(batch)
    assert same(params(a.model), params(b.model))
    assert same(params(a._target.unwrapped()), params(b._target.unwrapped()))
