"""stride.policy.SACPolicy: modes (stochastic collect, deterministic eval), soft TD target by hand,
automatic temperature, losses on fixed batches, Polyak target critics only, termination vs
truncation, list vs column batches, state_dict round trip."""

from __future__ import annotations

import copy
import io
import math

import gymnasium as gym
import numpy as np
import pytest
import torch

from stride.config import compile_config
from stride.envs.base_env import BaseEnvTimestep
from stride.policy import SACPolicy
from stride.zoo.pendulum.config.pendulum_sac_config import create_config, main_config

OBS, ACT = 3, 1
ACTIONS = gym.spaces.Box(-2.0, 2.0, (ACT,), np.float32)  # Pendulum's: the policy acts in its units


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def make_policy(seed: int = 0, **learn) -> SACPolicy:
    main = copy.deepcopy(main_config)
    main["policy"]["model"].update(actor_hidden_size_list=[32, 32], critic_hidden_size_list=[32, 32])
    main["policy"]["learn"].update(batch_size=16, **learn)
    cfg = compile_config(main, create_cfg=create_config, save_cfg=False, action_space=ACTIONS)
    torch.manual_seed(seed)
    return SACPolicy(cfg.policy)


def make_batch(n: int = 32, seed: int = 0, done=None) -> list:
    rng = np.random.default_rng(seed)
    done = rng.random(n) < 0.2 if done is None else done
    return [{"obs": rng.standard_normal(OBS).astype(np.float32), "action": rng.uniform(-1, 1, ACT).astype(np.float32),
             "reward": float(rng.standard_normal()), "next_obs": rng.standard_normal(OBS).astype(np.float32),
             "done": bool(done[i]), "value_gamma": 0.99} for i in range(n)]


def to_columns(batch: list) -> dict:
    return {"obs": np.stack([d["obs"] for d in batch]), "action": np.stack([d["action"] for d in batch]),
            "reward": np.array([d["reward"] for d in batch], dtype=np.float32),
            "next_obs": np.stack([d["next_obs"] for d in batch]), "done": np.array([d["done"] for d in batch]),
            "value_gamma": np.full(len(batch), 0.99, dtype=np.float32)}


def params(module) -> list:
    return [p.detach().clone() for p in module.parameters()]


def same(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b))


def test_defaults():
    cfg = SACPolicy.default_config()
    assert cfg.type == "sac" and cfg.model.action_space == "reparameterization" and cfg.model.twin_critic is True
    assert cfg.learn.auto_alpha is True and cfg.random_collect_size > 0
    p = make_policy()
    assert p._target_entropy == -1.0 and p._log_alpha.exp().item() == pytest.approx(0.2)


def test_collect_is_stochastic_and_bounded_eval_is_tanh_mu():
    p = make_policy()
    obs = {5: np.ones(OBS, np.float32)}
    samples = np.stack([p.collect_mode.forward(obs)[5]["action"] for _ in range(100)])
    assert samples.shape == (100, ACT) and np.abs(samples).max() <= 2.0 and samples.std() > 0.1
    ev = p.eval_mode.forward(obs)[5]["action"]
    with torch.no_grad():
        mu = p.model(torch.ones(1, OBS), mode="compute_actor")["mu"][0].numpy()
    # the tanh mean, mapped onto Pendulum's torque range [-2, 2]
    assert np.allclose(ev, 2.0 * np.tanh(mu), atol=1e-6) and np.array_equal(ev, p.eval_mode.forward(obs)[5]["action"])


def test_process_transition_done_means_terminated():
    p = make_policy()
    o = np.zeros(OBS, np.float32)
    out = {"action": np.zeros(ACT, np.float32)}
    trunc = BaseEnvTimestep(o, -1.0, True, {"terminated": False, "truncated": True})
    term = BaseEnvTimestep(o, -1.0, True, {"terminated": True, "truncated": False})
    assert p.collect_mode.process_transition(o, out, trunc)["done"] is False
    assert p.collect_mode.process_transition(o, out, term)["done"] is True


def test_soft_td_target_by_hand():
    p = make_policy()
    batch = to_columns(make_batch(8))
    t = {k: torch.as_tensor(v) for k, v in batch.items()}
    torch.manual_seed(11)
    with torch.no_grad():  # replay the policy's own draw of a' ~ pi(.|s')
        out = p.model(t["next_obs"], mode="compute_actor")
        u = out["mu"] + out["sigma"] * torch.randn_like(out["mu"])
        a = torch.tanh(u)
        logp = (torch.distributions.Normal(out["mu"], out["sigma"]).log_prob(u) - torch.log(1 - a**2)).sum(-1)
        q_next = p._target_critic.forward(t["next_obs"], a)
        y = t["reward"] + 0.99 * (1 - t["done"].float()) * (q_next.min(0).values - 0.2 * logp)
        q = p.model({"obs": t["obs"], "action": t["action"]}, mode="compute_critic")["q_value"]
    expected = (0.5 * (q - y) ** 2).mean(-1).sum().item()
    torch.manual_seed(11)
    assert p.learn_mode.forward(batch)["critic_loss"] == pytest.approx(expected, rel=1e-4)


def test_learn_outputs_and_every_part_moves():
    p = make_policy()
    actor0, critic0, alpha0 = params(p.model.actor), params(p.model.critic), p._log_alpha.item()
    out = p.learn_mode.forward(make_batch())
    assert set(p.learn_mode.monitor_vars()) <= set(out) and all(np.isfinite(v) for v in out.values())
    assert not same(actor0, params(p.model.actor)) and not same(critic0, params(p.model.critic))
    assert p._log_alpha.item() != alpha0


def test_temperature_tracks_the_target_entropy():
    # entropy far below the target -> alpha grows; far above -> alpha shrinks
    for target, grows in ((10.0, True), (-10.0, False)):
        p = make_policy(target_entropy=target, learning_rate_alpha=1e-2)
        batch = to_columns(make_batch())
        for _ in range(5):
            p.learn_mode.forward(batch)
        assert (p._log_alpha.exp().item() > 0.2) is grows


def test_fixed_alpha_when_auto_alpha_off():
    p = make_policy(auto_alpha=False, alpha=0.05)
    for _ in range(3):
        out = p.learn_mode.forward(make_batch())
    assert out["alpha"] == pytest.approx(0.05) and p._alpha_optimizer is None
    assert "alpha_optimizer" not in p.learn_mode.state_dict()


def test_critic_loss_decreases_on_a_fixed_batch():
    p = make_policy(learning_rate_q=1e-2)
    batch = to_columns(make_batch(64, done=np.ones(64, bool)))  # targets = rewards: a plain regression
    batch["reward"] = batch["obs"].sum(1) + batch["action"][:, 0]
    losses = [p.learn_mode.forward(batch)["critic_loss"] for _ in range(40)]
    assert np.mean(losses[-5:]) < 0.3 * np.mean(losses[:5])


def test_policy_loss_decreases_on_a_fixed_batch():
    # first the critics learn Q(s, a) = 3a (terminal transitions, reward 3a), the actor frozen ...
    p = make_policy(learning_rate_q=1e-2, auto_alpha=False, alpha=0.01)
    p._policy_optimizer.param_groups[0]["lr"] = 0.0  # (a learning rate of 0 is refused by the config)
    batch = to_columns(make_batch(64, done=np.ones(64, bool)))
    batch["reward"] = 3.0 * batch["action"][:, 0]
    for _ in range(40):
        p.learn_mode.forward(batch)
    # ... then the critics are frozen and the actor climbs them: towards a = +1
    p._q_optimizer.param_groups[0]["lr"], p._policy_optimizer.param_groups[0]["lr"] = 0.0, 1e-2
    losses = [p.learn_mode.forward(batch)["policy_loss"] for _ in range(30)]
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) - 0.5
    obs = {i: o for i, o in enumerate(batch["obs"][:8])}
    assert np.mean([a["action"] for a in p.eval_mode.forward(obs).values()]) > 0.5


def test_only_the_critics_have_a_polyak_target():
    p = make_policy(target_theta=0.5)
    assert {id(x) for x in p._target_critic.parameters()}.isdisjoint({id(x) for x in p.model.parameters()})
    t0 = params(p._target_critic.unwrapped())
    p.learn_mode.forward(make_batch())
    for a, b, o in zip(t0, params(p._target_critic.unwrapped()), params(p.model.critic)):
        assert torch.allclose(b, 0.5 * a + 0.5 * o, atol=1e-6)


def test_terminated_transitions_ignore_next_obs_truncated_ones_do_not():
    def critic_after_step(done, scale):
        p = make_policy(seed=2)
        batch = to_columns(make_batch(16, done=np.full(16, done)))
        batch["next_obs"] = batch["next_obs"] * scale
        torch.manual_seed(0)
        p.learn_mode.forward(batch)
        return params(p.model.critic)

    assert same(critic_after_step(True, 1.0), critic_after_step(True, 4.0))
    assert not same(critic_after_step(False, 1.0), critic_after_step(False, 4.0))


def test_list_and_column_batches_give_the_same_step():
    batch = make_batch()
    a, b = make_policy(), make_policy()
    torch.manual_seed(0)
    out_a = a.learn_mode.forward(batch)
    torch.manual_seed(0)
    out_b = b.learn_mode.forward(to_columns(batch))
    assert float(out_a["critic_loss"]) == pytest.approx(float(out_b["critic_loss"]), rel=1e-6)
    assert all(torch.allclose(x, y, atol=1e-6) for x, y in zip(a.model.parameters(), b.model.parameters()))


def test_state_dict_round_trip_through_a_checkpoint():
    a = make_policy(seed=0)
    batch = to_columns(make_batch())
    for _ in range(3):
        a.learn_mode.forward(batch)
    buf = io.BytesIO()
    torch.save(a.learn_mode.state_dict(), buf)
    buf.seek(0)
    b = make_policy(seed=4)
    b.learn_mode.load_state_dict(torch.load(buf, weights_only=True))
    assert b._log_alpha.item() == a._log_alpha.item() and not math.isclose(a._log_alpha.item(), math.log(0.2))
    for p in (a, b):
        torch.manual_seed(3)
        p.learn_mode.forward(batch)
    assert same(params(a.model), params(b.model))
    assert same(params(a._target_critic.unwrapped()), params(b._target_critic.unwrapped()))
    assert a._log_alpha.item() == b._log_alpha.item()


def test_learning_rate_schedules_through_compile_config():
    linear = {"type": "linear", "start": 1e-3, "end": 0.0, "steps": 2}
    p = make_policy(learning_rate_q=linear, learning_rate_alpha={"type": "piecewise", "points": [[0, 1e-2], [1, 1e-3]]})
    batch = make_batch(16)
    assert [p.learn_mode.forward(batch)["cur_lr_q"] for _ in range(3)] == pytest.approx([1e-3, 5e-4, 0.0])
    sd = p.learn_mode.state_dict()
    assert sd["alpha_optimizer"]["param_groups"][0]["lr"] == pytest.approx(1e-3)  # its schedule at train_iter 2
    assert sd["policy_optimizer"]["param_groups"][0]["lr"] == p.cfg.learn.learning_rate_policy and sd["schedule_counters"]["train_iter"] == 3
