"""stride.policy.DDPGPolicy: modes, critic/actor losses on fixed batches, termination vs truncation,
list vs column batches, every-step actor updates, Polyak targets, state_dict round trip."""

from __future__ import annotations

import copy
import math
import io

import gymnasium as gym
import numpy as np
import pytest
import torch

from stride.config import compile_config
from stride.envs.base_env import BaseEnvTimestep
from stride.policy import DDPGPolicy
from stride.zoo.pendulum.config.pendulum_ddpg_config import create_config, main_config

OBS, ACT = 3, 1
ACTIONS = gym.spaces.Box(-2.0, 2.0, (ACT,), np.float32)  # Pendulum's: the policy acts in its units


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)  # small nets: threads only add contention on shared CI cores
    yield
    torch.set_num_threads(n)


def make_policy(seed: int = 0, **learn) -> DDPGPolicy:
    main = copy.deepcopy(main_config)
    main["policy"]["model"].update(actor_hidden_size_list=[32, 32], critic_hidden_size_list=[32, 32])
    main["policy"]["learn"].update(batch_size=16, **learn)
    cfg = compile_config(main, create_cfg=create_config, save_cfg=False, action_space=ACTIONS)
    torch.manual_seed(seed)
    return DDPGPolicy(cfg.policy)


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


def test_defaults_and_registration():
    from stride.utils.registry import POLICY_REGISTRY

    assert POLICY_REGISTRY.get("ddpg") is DDPGPolicy
    cfg = DDPGPolicy.default_config()
    assert cfg.model.twin_critic is False and cfg.learn.actor_update_freq == 1 and cfg.learn.noise is False
    assert DDPGPolicy.default_model()[0] == "qac"


def test_collect_adds_bounded_noise_and_eval_is_deterministic():
    p = make_policy()
    obs = {i: np.random.default_rng(i).standard_normal(OBS).astype(np.float32) for i in (3, 7)}
    out = p.collect_mode.forward(obs)
    assert set(out) == {3, 7} and out[3]["action"].shape == (ACT,)
    ev1, ev2 = p.eval_mode.forward(obs), p.eval_mode.forward(obs)
    assert all(np.array_equal(ev1[i]["action"], ev2[i]["action"]) for i in obs)
    many = np.stack([p.collect_mode.forward(obs)[3]["action"] for _ in range(200)])
    assert np.abs(many).max() <= 2.0  # Pendulum's torque range: actions leave in the env's units
    # gauss sigma 0.1 in the actor's [-1, 1] is 0.2 of torque (some clipped at the bound)
    assert 0.1 < np.std(many - ev1[3]["action"]) < 0.3


def test_process_transition_done_means_terminated():
    p = make_policy()
    o = np.zeros(OBS, np.float32)
    trunc = BaseEnvTimestep(o, -1.0, True, {"terminated": False, "truncated": True})
    term = BaseEnvTimestep(o, -1.0, True, {"terminated": True, "truncated": False})
    mid = BaseEnvTimestep(o, -1.0, False, {})
    out = {"action": np.zeros(ACT, np.float32)}
    assert p.collect_mode.process_transition(o, out, trunc)["done"] is False
    assert p.collect_mode.process_transition(o, out, term)["done"] is True
    assert p.collect_mode.process_transition(o, out, mid)["done"] is False
    samples = p.collect_mode.get_train_sample([p.collect_mode.process_transition(o, out, trunc)])
    assert samples[0]["done"] is False and "value_gamma" not in samples[0]  # 1-step: bootstrap with discount_factor


def test_learn_returns_finite_scalars_and_updates_actor_every_step():
    p = make_policy()
    actor0, critic0 = params(p.model.actor), params(p.model.critic)
    out = p.learn_mode.forward(make_batch())
    assert set(p.learn_mode.monitor_vars()) <= set(out)
    assert all(np.isfinite(v) for v in out.values())
    assert not same(actor0, params(p.model.actor)) and not same(critic0, params(p.model.critic))


def test_list_and_column_batches_give_the_same_step():
    batch = make_batch()
    a, b = make_policy(), make_policy()
    out_a, out_b = a.learn_mode.forward(batch), b.learn_mode.forward(to_columns(batch))
    assert float(out_a["critic_loss"]) == pytest.approx(float(out_b["critic_loss"]), rel=1e-6)
    assert all(torch.allclose(x, y, atol=1e-6) for x, y in zip(a.model.parameters(), b.model.parameters()))


def test_critic_loss_decreases_on_a_fixed_batch():
    p = make_policy(learning_rate_critic=1e-2)
    batch = to_columns(make_batch(64, done=np.ones(64, bool)))  # targets = rewards: a plain regression
    batch["reward"] = batch["obs"].sum(1) + batch["action"][:, 0]  # a learnable function of (s, a)
    losses = [p.learn_mode.forward(batch)["critic_loss"] for _ in range(40)]
    assert np.mean(losses[-5:]) < 0.3 * np.mean(losses[:5])


def test_actor_ascends_the_critic():
    p = make_policy()
    batch = to_columns(make_batch(64))
    first = p.learn_mode.forward(batch)["actor_loss"]
    for _ in range(20):
        last = p.learn_mode.forward(batch)["actor_loss"]
    assert last < first  # actor_loss = -Q(s, mu(s))


def test_terminated_transitions_ignore_next_obs_truncated_ones_do_not():
    def critic_after_step(done, next_obs_scale):
        p = make_policy(seed=1)
        batch = to_columns(make_batch(16, done=np.full(16, done)))
        batch["next_obs"] = batch["next_obs"] * next_obs_scale
        p.learn_mode.forward(batch)
        return params(p.model.critic)

    assert same(critic_after_step(True, 1.0), critic_after_step(True, 5.0))
    assert not same(critic_after_step(False, 1.0), critic_after_step(False, 5.0))


def test_target_networks_move_by_polyak_rate():
    p = make_policy(target_theta=0.25)
    target0 = params(p._target.unwrapped())
    p.learn_mode.forward(make_batch())
    online = params(p.model)
    for t0, t1, o in zip(target0, params(p._target.unwrapped()), online):
        assert torch.allclose(t1, 0.75 * t0 + 0.25 * o, atol=1e-6)


def test_state_dict_round_trip_through_a_checkpoint():
    a = make_policy(seed=0)
    batch = to_columns(make_batch())
    for _ in range(3):
        a.learn_mode.forward(batch)
    buf = io.BytesIO()
    torch.save(a.learn_mode.state_dict(), buf)
    buf.seek(0)
    b = make_policy(seed=5)
    b.learn_mode.load_state_dict(torch.load(buf, weights_only=True))
    assert b._learn_steps == 3
    torch.manual_seed(0)
    out_a = a.learn_mode.forward(batch)
    torch.manual_seed(0)
    out_b = b.learn_mode.forward(batch)
    assert out_a == out_b
    assert same(params(a.model), params(b.model)) and same(params(a._target.unwrapped()), params(b._target.unwrapped()))
    c = make_policy(seed=9)
    c.collect_mode.load_state_dict(a.collect_mode.state_dict())
    c.eval_mode.load_state_dict(a.eval_mode.state_dict())
    assert same(params(a.model), params(c.model))


def test_priority_is_returned_when_asked():
    main = copy.deepcopy(main_config)
    main["policy"]["priority"] = True
    cfg = compile_config(main, create_cfg=create_config, save_cfg=False, action_space=ACTIONS)
    out = DDPGPolicy(cfg.policy).learn_mode.forward(make_batch(8))
    assert out["priority"].shape == (8,) and (out["priority"] >= 0).all()


def test_actor_and_critic_learning_rate_schedules():
    p = make_policy(learning_rate_actor={"type": "exp", "start": 1e-3, "end": 0.0, "decay": 1},
                    learning_rate_critic={"type": "constant", "value": 2e-3})
    batch = make_batch(16)
    logs = [p.learn_mode.forward(batch) for _ in range(2)]
    assert [o["cur_lr_actor"] for o in logs] == pytest.approx([1e-3, 1e-3 * math.exp(-1)])
    assert [o["cur_lr_critic"] for o in logs] == [2e-3, 2e-3]


def test_exploration_noise_follows_its_schedule_of_env_steps():
    main = copy.deepcopy(main_config)
    main["policy"]["collect"]["noise_sigma"] = {"type": "linear", "start": 0.5, "end": 0.0, "steps": 1000}
    p = DDPGPolicy(compile_config(main, create_cfg=create_config, save_cfg=False, action_space=ACTIONS).policy)
    kw = p.collect_mode.collect_kwargs
    assert kw(0, 0) == {"sigma": 0.5} and kw(500, 7)["sigma"] == pytest.approx(0.25) and kw(2000, 0)["sigma"] == 0.0
    obs = {i: np.full(OBS, 0.1 * i, dtype=np.float32) for i in range(4)}
    noiseless = p.collect_mode.forward(obs, **kw(2000, 0))  # sigma 0: the eval action
    for i, out in p.eval_mode.forward(obs).items():
        np.testing.assert_allclose(noiseless[i]["action"], out["action"], atol=1e-6)
