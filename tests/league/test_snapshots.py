"""``stride.league.snapshots``: a frozen copy of the weights that later training never changes, an
eval-only policy acting with it, and loading it back into the learn state -- generic over policies
(checked on DQN with masked board observations and on PPO with vector observations)."""

from __future__ import annotations

import numpy as np
import torch

import pytest

from stride.config import merge_config
from stride.league import frozen, league_mode, load_snapshot, snapshot
from stride.policy import DQNPolicy, PPOPolicy

N = 9


def _dqn() -> DQNPolicy:
    cfg = merge_config(DQNPolicy.default_config(), {
        "model": {"obs_shape": [3, 3, 2], "action_shape": N, "encoder": "mlp", "encoder_hidden_size_list": [16]},
        "collect": {"n_sample": 8}, "learn": {"batch_size": 8}, "nstep": 1})
    torch.manual_seed(0)
    return DQNPolicy(cfg)


def _boards(n, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(n):
        mask = np.zeros(N, np.int8)
        mask[rng.choice(N, size=int(rng.integers(1, N)), replace=False)] = 1
        out[i] = {"observation": rng.integers(0, 2, (3, 3, 2)).astype(np.int8), "action_mask": mask}
    return out


def _actions(mode, data):
    return {k: int(v["action"]) for k, v in mode.forward(data).items()}


def _perturb(policy):
    with torch.no_grad():
        for p in policy.model.parameters():
            p.add_(torch.randn_like(p))


def test_snapshot_is_frozen_and_plays_as_the_policy_did():
    policy, data = _dqn(), _boards(64)
    before = _actions(policy.eval_mode, data)
    weights = snapshot(policy)
    player = frozen(policy, weights)
    assert _actions(player, data) == before
    _perturb(policy)                                  # training goes on
    after = _actions(policy.eval_mode, data)
    assert after != before
    assert _actions(player, data) == before           # the frozen player did not move
    assert _actions(frozen(policy, weights), data) == before   # nor its weights
    # frozen players act legally too
    assert all(data[k]["action_mask"][a] for k, a in _actions(player, data).items())


def test_load_snapshot_puts_the_weights_back_into_the_learn_state():
    policy, data = _dqn(), _boards(64, seed=1)
    weights = snapshot(policy)
    before = _actions(policy.eval_mode, data)
    _perturb(policy)
    load_snapshot(policy, weights)
    assert _actions(policy.eval_mode, data) == before
    learn = policy.learn_mode.state_dict()["model"]
    for k, v in weights["model"].items():
        assert torch.equal(learn[k], v)


def test_generic_over_policies_ppo():
    cfg = merge_config(PPOPolicy.default_config(), {"model": {"obs_shape": 4, "action_shape": 2},
                                                    "collect": {"n_sample": 16}})
    torch.manual_seed(0)
    policy = PPOPolicy(cfg)
    obs = {i: np.random.default_rng(i).standard_normal(4).astype(np.float32) for i in range(32)}
    weights = snapshot(policy)
    player = frozen(policy, weights)
    before = _actions(policy.eval_mode, obs)
    _perturb(policy)
    assert _actions(player, obs) == before


def test_policy_league_mode_is_a_deprecated_alias_of_the_adapter():
    policy, data = _dqn(), _boards(16, seed=2)
    with pytest.warns(DeprecationWarning, match="stride.league.league_mode"):
        mode = policy.league_mode
    assert mode._fields == league_mode(policy)._fields == ("snapshot", "frozen", "load_snapshot")
    weights = mode.snapshot()
    assert _actions(mode.frozen(weights), data) == _actions(policy.eval_mode, data)
