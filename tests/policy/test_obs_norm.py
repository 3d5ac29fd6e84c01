"""policy.obs_norm: collect forwards update the running statistics; eval and learn only apply them;
they live in the model's state_dict, so every mode's state dict (and a checkpoint) restores them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from stride.config import merge_config
from stride.model.common.normalize import RunningNorm
from stride.policy.ppo import PPOPolicy
from stride.policy.sac import SACPolicy
from stride.policy.views import PolicyConfig
from stride.utils.errors import ConfigError


def _ppo(obs_norm: bool = True) -> PPOPolicy:
    cfg = dict(type="ppo", obs_norm=obs_norm, action_range=[-1.0, 1.0],
               model=dict(obs_shape=3, action_shape=2, action_space="continuous", share_encoder=False),
               collect=dict(n_sample=8))
    return PPOPolicy(merge_config(PPOPolicy.default_config(), cfg))


def _obs(rng, n=4, loc=10.0, scale=5.0):
    return {i: rng.normal(loc, scale, size=3).astype(np.float32) for i in range(n)}


def test_collect_updates_eval_does_not_and_both_normalise():
    rng = np.random.default_rng(0)
    policy = _ppo()
    norm = policy.model.obs_norm
    assert isinstance(norm, RunningNorm)
    seen = []
    for _ in range(5):
        data = _obs(rng)
        seen.extend(data.values())
        policy.collect_mode.forward(data)
    stream = np.stack(seen).astype(np.float64)
    np.testing.assert_allclose(norm.mean.numpy(), stream.mean(0), rtol=1e-9)
    np.testing.assert_allclose(norm.var.numpy(), stream.var(0), rtol=1e-9)
    before = {k: v.clone() for k, v in policy.model.state_dict().items()}
    policy.eval_mode.forward(_obs(rng, loc=-100.0))
    after = policy.model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before), "eval moved the statistics"
    # what the model sees is the normalised observation (eval and collect alike)
    ids, x = policy._io.obs_batch({0: seen[0]})
    expected = (seen[0].astype(np.float64) - stream.mean(0)) / np.sqrt(stream.var(0) + 1e-8)
    np.testing.assert_allclose(x.numpy()[0], expected, rtol=1e-5)


def test_learn_batches_are_normalised_with_the_same_stats_and_do_not_update():
    rng = np.random.default_rng(1)
    policy = _ppo()
    policy.collect_mode.forward(_obs(rng, n=16))
    norm = policy.model.obs_norm
    count = norm.count.item()
    raw = [dict(obs=rng.normal(10, 5, 3).astype(np.float32), next_obs=rng.normal(10, 5, 3).astype(np.float32),
                reward=1.0) for _ in range(5)]
    batch = policy._io.learn_batch(raw)
    for key in ("obs", "next_obs"):
        col = torch.as_tensor(np.stack([r[key] for r in raw]))
        torch.testing.assert_close(batch[key], norm.normalize(col))
    assert norm.count.item() == count


def test_state_dicts_carry_the_statistics_and_restore_them_exactly():
    rng = np.random.default_rng(2)
    a, b = _ppo(), _ppo()
    for _ in range(3):
        a.collect_mode.forward(_obs(rng))
    for mode in ("learn_mode", "collect_mode", "eval_mode"):
        sd = getattr(a, mode).state_dict()
        assert {"obs_norm.mean", "obs_norm.var", "obs_norm.count"} <= set(sd["model"])
    b.learn_mode.load_state_dict(a.learn_mode.state_dict())
    for k in ("mean", "var", "count"):
        assert torch.equal(getattr(a.model.obs_norm, k), getattr(b.model.obs_norm, k))
    data = _obs(rng)
    ea, eb = a.eval_mode.forward(data), b.eval_mode.forward(data)
    for i in data:
        np.testing.assert_array_equal(ea[i]["action"], eb[i]["action"])
    # a checkpoint without the statistics does not load into a normalising policy (or the reverse)
    with pytest.raises(RuntimeError, match="obs_norm"):
        b.eval_mode.load_state_dict(_ppo(obs_norm=False).eval_mode.state_dict())


def test_off_by_default_and_off_policy_learn_batches():
    assert not hasattr(_ppo(obs_norm=False).model, "obs_norm")
    cfg = merge_config(SACPolicy.default_config(), dict(type="sac", obs_norm=True, action_range=[-1.0, 1.0],
                                                        collect=dict(n_sample=1)))
    cfg.model.obs_shape, cfg.model.action_shape = 3, 1  # the model's own keys (compile_config checks them)
    sac = SACPolicy(cfg)
    rng = np.random.default_rng(3)
    sac.collect_mode.forward(_obs(rng))
    assert sac.model.obs_norm.count.item() == 4


def test_needs_a_box_obs_shape():
    cfg = dict(type="ppo", obs_norm=True, model=dict(obs_shape=3, action_shape=2, action_space="continuous"))
    cfg = merge_config(PPOPolicy.default_config(), cfg)
    cfg.model.obs_shape = {"image": [3, 8, 8]}
    with pytest.raises(ConfigError, match="obs_norm"):
        PPOPolicy(cfg, model=torch.nn.Linear(1, 1))


@pytest.mark.parametrize("bad", [dict(obs_norm="yes"), dict(obs_norm_clip=0), dict(obs_norm_clip=-1.0)])
def test_the_keys_are_validated(bad):
    with pytest.raises(ConfigError, match="obs_norm"):
        merge_config(PPOPolicy.declared_config(), bad)


def test_the_component_attaches_only_when_asked_and_reuses_the_models_statistics():
    from stride.policy.obs_norm import ObsNorm

    model = torch.nn.Linear(3, 2)
    assert ObsNorm.attach(model, PolicyConfig(obs_norm=False)) is None and not hasattr(model, "obs_norm")
    norm = ObsNorm.attach(model, PolicyConfig(obs_norm=True, obs_norm_clip=2.0, model={"obs_shape": 3}))
    assert norm is not None and isinstance(model.obs_norm, RunningNorm)
    assert set(k for k in model.state_dict() if k.startswith("obs_norm.")), "the statistics are the model's"
    stats = model.obs_norm
    ObsNorm.attach(model, PolicyConfig(obs_norm=True, model={"obs_shape": 3}))
    assert model.obs_norm is stats  # a model that has them keeps them (a checkpoint's)
    with pytest.raises(ConfigError, match=r"policy.obs_norm needs policy.model.obs_shape .* got \{'a': 3\}"):
        ObsNorm.attach(torch.nn.Linear(3, 2), PolicyConfig(obs_norm=True, model={"obs_shape": {"a": 3}}))


def test_the_observed_forward_updates_the_statistics_before_acting():
    from stride.policy.obs_norm import ObsNorm

    model = torch.nn.Linear(3, 2)
    norm = ObsNorm.attach(model, PolicyConfig(obs_norm=True, obs_norm_clip=100.0, model={"obs_shape": 3}))
    assert norm is not None
    seen = []

    def forward(data, **kwargs):
        if data:
            seen.append((norm.normalize(torch.as_tensor(data[0])).clone(), kwargs))
        return {k: {"action": 0} for k in data}

    observed = norm.observed(forward)
    obs = {0: np.full(3, 10.0, np.float32), 1: np.full(3, 10.0, np.float32)}
    assert observed(obs, eps=0.5) == {0: {"action": 0}, 1: {"action": 0}}
    assert seen[0][1] == {"eps": 0.5}
    # the statistics moved toward 10 before forward ran: 10 is no longer ~10 standard deviations out
    assert seen[0][0].abs().max() < 5.0
    count = float(model.obs_norm.count)
    assert count == pytest.approx(2.0, abs=1e-3)
    observed({})  # nothing observed: nothing moves
    assert float(model.obs_norm.count) == count
