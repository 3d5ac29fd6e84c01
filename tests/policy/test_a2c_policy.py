"""stride.policy.A2CPolicy: own config (no PPO keys), one gradient step per collect, GAE from PPO's
collect mode, state dict round trip."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from stride.config import merge_config
from stride.envs.base_env import BaseEnvTimestep
from stride.policy import A2CPolicy
from stride.utils.errors import ConfigError
from stride.utils.registry import POLICY_REGISTRY
from .logs import numbers

OBS, ACT = 4, 2


def make_policy(seed: int = 0, **patch) -> A2CPolicy:
    user = {"model": {"obs_shape": OBS, "action_shape": ACT, "encoder_hidden_size_list": [16, 16],
                      "actor_head_hidden_size": 16, "critic_head_hidden_size": 16},
            "collect": {"n_sample": 16}}
    for k, v in patch.items():
        user[k] = {**user.get(k, {}), **v} if isinstance(v, dict) else v
    cfg = merge_config(A2CPolicy.declared_config(), user)
    torch.manual_seed(seed)
    return A2CPolicy(cfg)


def _batch(p: A2CPolicy, seed: int = 0, n: int = 24) -> list:
    rng = np.random.default_rng(seed)
    obs = [rng.standard_normal(OBS).astype(np.float32) for _ in range(n + 1)]
    out = p.collect_mode.forward({i: obs[i] for i in range(n)})
    trans = []
    for t in range(n):
        reward = 1.0 if int(out[t]["action"]) == int(obs[t][0] > 0) else 0.0
        done = t == n - 1
        ts = BaseEnvTimestep(obs[t + 1], reward, done, {"terminated": True} if done else {})
        trans.append(p.collect_mode.process_transition(obs[t], out[t], ts))
    return p.collect_mode.get_train_sample(trans)


def test_registered_and_config_has_no_ppo_keys():
    assert POLICY_REGISTRY.get("a2c") is A2CPolicy
    cfg = A2CPolicy.default_config()
    assert cfg.on_policy is True and cfg.type == "a2c" and cfg.gae_lambda == 1.0
    for key in ("epoch_per_collect", "batch_size", "clip_ratio", "recompute_adv"):
        assert key not in cfg.learn
    with pytest.raises(ConfigError, match="clip_ratio"):
        merge_config(cfg, {"learn": {"clip_ratio": 0.2}})


def test_lambda_one_gives_discounted_returns_of_a_terminated_episode():
    p = make_policy(discount_factor=0.5)
    samples = _batch(p, n=4)
    rewards = [s["reward"] for s in samples]
    expected = [rewards[t] + 0.5 * rewards[t + 1] + 0.25 * rewards[t + 2] + 0.125 * rewards[t + 3]
                if t == 0 else sum(0.5 ** (k - t) * rewards[k] for k in range(t, 4)) for t in range(4)]
    assert [s["return"] for s in samples] == pytest.approx(expected, abs=1e-5)


def test_one_gradient_step_per_call():
    p = make_policy()
    data = _batch(p)
    steps = []
    p._optimizer.step = (lambda f: (lambda *a, **k: (steps.append(1), f(*a, **k))[1]))(p._optimizer.step)
    log = p.learn_mode.forward(data)
    assert len(steps) == 1
    assert {"cur_lr", "total_loss", "policy_loss", "value_loss", "entropy", "grad_norm"} <= set(log)
    assert set(p.learn_mode.monitor_vars()) <= set(log)


def test_loss_decreases_on_a_fixed_batch():
    p = make_policy(learn={"learning_rate": 3e-3, "optimizer": "adam"})
    data = _batch(p)
    logs = [p.learn_mode.forward(data) for _ in range(15)]
    assert logs[-1]["value_loss"] < logs[0]["value_loss"]


def test_unknown_optimizer():
    with pytest.raises(ValueError, match="rmsprop"):
        make_policy(learn={"optimizer": "sgd"})


def test_state_dict_round_trip():
    p = make_policy(seed=0)
    p.learn_mode.forward(_batch(p))
    q = make_policy(seed=1)
    q.learn_mode.load_state_dict(copy.deepcopy(p.learn_mode.state_dict()))
    data = _batch(p, seed=1)
    assert p.learn_mode.forward(data) == q.learn_mode.forward(data)
    for a, b in zip(p.model.parameters(), q.model.parameters()):
        assert torch.equal(a, b)


def test_learning_rate_and_entropy_schedules_are_used_and_resume():
    lr = {"type": "linear", "start": 1e-3, "end": 0.0, "steps": 4}
    ent = {"type": "piecewise", "points": [[0, 0.0], [2, 0.2]]}
    p = make_policy(learn={"learning_rate": lr, "entropy_weight": ent, "optimizer": "adam"})
    data = _batch(p)
    logs = [numbers(p.learn_mode.forward(data)) for _ in range(2)]
    assert [o["cur_lr"] for o in logs] == pytest.approx([1e-3, 7.5e-4])
    for out, weight in zip(logs, (0.0, 0.1)):  # total = policy + 0.5 value - w entropy
        assert out["total_loss"] == pytest.approx(out["policy_loss"] + 0.5 * out["value_loss"] - weight * out["entropy"], abs=1e-6)
    q = make_policy(seed=1, learn={"learning_rate": lr, "entropy_weight": ent, "optimizer": "adam"})
    q.learn_mode.load_state_dict(copy.deepcopy(p.learn_mode.state_dict()))
    out = numbers(q.learn_mode.forward(data))
    assert out["cur_lr"] == pytest.approx(5e-4) and out == numbers(p.learn_mode.forward(data))
