"""stride.policy.modes: every registered policy's modes satisfy the typed Protocols, and the
settings the workers read are the config's values (no string attribute channel)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from stride.config.config import Config, deep_update
from stride.policy.modes import CollectMode, CollectSettings, EvalMode, LearnMode, PolicySettings
from stride.policy.random_policy import random_collect_mode
from stride.policy.views import PolicyCollectConfig, PolicyConfig, PolicyLearnConfig
from stride.utils.registry import POLICY_REGISTRY

SMALL = {"model": {"obs_shape": 4, "action_shape": 2}, "collect": {"n_sample": 8}}


def _policy(name: str, **patch: object):
    cls = POLICY_REGISTRY.get(name)
    torch.manual_seed(0)
    return cls(Config(deep_update(dict(cls.default_config()), deep_update(dict(SMALL), patch))))


@pytest.mark.parametrize("name", POLICY_REGISTRY.names())
def test_every_registered_policys_modes_satisfy_the_protocols(name):
    policy = _policy(name)
    assert isinstance(policy.learn_mode, LearnMode)
    assert isinstance(policy.collect_mode, CollectMode) and isinstance(policy.collect_mode, CollectSettings)
    assert isinstance(policy.eval_mode, EvalMode)
    for mode in (policy.learn_mode, policy.collect_mode, policy.eval_mode):
        assert not hasattr(mode, "get_attribute") and not hasattr(mode, "set_attribute")


def test_the_settings_are_the_typed_configs_values():
    cfg = PolicyConfig(on_policy=True, priority=True, nstep=4, collect=PolicyCollectConfig(n_episode=3, unroll_len=7),
                       learn=PolicyLearnConfig(batch_size=5))
    s = PolicySettings(cfg)
    assert (s.n_sample, s.n_episode, s.on_policy, s.priority) == (None, 3, True, True)
    assert (s.batch_size, s.unroll_len, s.lookahead) == (5, 7, 3)
    # a policy that declares none of them reads the base view's fixed values
    bare = PolicySettings(PolicyConfig(on_policy=False))
    assert (bare.n_sample, bare.batch_size, bare.unroll_len, bare.lookahead) == (None, None, 1, 0)


def test_the_modes_read_their_policys_settings():
    policy = _policy("dqn", nstep=3, collect={"n_sample": 6}, learn={"batch_size": 12})
    collect, learn = policy.collect_mode, policy.learn_mode
    assert (collect.n_sample, collect.n_episode, collect.lookahead, collect.unroll_len) == (6, None, 2, 1)
    assert (learn.batch_size, learn.priority, collect.on_policy) == (12, False, False)
    assert _policy("a2c").learn_mode.batch_size is None  # A2C learns from one collect, whole


def test_r2d2_cuts_sequences():
    policy = _policy("r2d2", burnin_step=3, learn_unroll_len=6, nstep=2)
    assert type(policy).settings is not PolicySettings
    assert (policy.collect_mode.unroll_len, policy.collect_mode.lookahead) == (6, 5)
    state = policy.collect_mode.episode_state()
    assert state is not None and state["running"] == []


def test_the_learn_mode_moves_the_schedule_counters_and_saves_them():
    policy = _policy("dqn", learn={"batch_size": 4})
    rng = np.random.default_rng(0)
    batch = [{"obs": rng.standard_normal(4).astype(np.float32), "action": 1, "reward": 1.0,
              "next_obs": rng.standard_normal(4).astype(np.float32), "done": False} for _ in range(4)]
    learn = policy.learn_mode
    learn.set_envstep(70)
    learn.forward(batch)
    assert learn.state_dict()["schedule_counters"] == {"train_iter": 1, "env_step": 70}
    other = _policy("dqn", learn={"batch_size": 4}).learn_mode
    other.load_state_dict(learn.state_dict())
    assert other.state_dict()["schedule_counters"] == {"train_iter": 1, "env_step": 70}


def test_a_random_collect_mode_is_a_collect_mode_with_its_inners_settings():
    policy = _policy("dqn", collect={"n_sample": 5})
    random = random_collect_mode(gym.spaces.Discrete(2), policy.collect_mode, seed=0)
    assert isinstance(random, CollectMode)
    assert random.n_sample == 5 and random.lookahead == policy.collect_mode.lookahead
    assert random.collect_kwargs(10, 2) == {} and random.episode_state() is None
    out = random.forward({0: np.zeros(4, np.float32), 3: np.zeros(4, np.float32)})
    assert sorted(out) == [0, 3] and all(0 <= int(o["action"]) < 2 for o in out.values())


def test_collect_and_eval_states_come_on_the_cpu_and_load_back():
    policy, other = _policy("dqn"), _policy("dqn")
    for mode in ("collect_mode", "eval_mode"):
        state = getattr(policy, mode).state_dict()
        assert all(t.device.type == "cpu" for t in state["model"].values())
        getattr(other, mode).load_state_dict(state)
        assert all(torch.equal(a, b) for a, b in zip(other.model.state_dict().values(), policy.model.state_dict().values()))
