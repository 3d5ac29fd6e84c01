"""stride.policy.PPOPolicy: modes' interface, GAE bootstrap cases, loss decreases, state dicts."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch import nn

from stride.config import merge_config
from stride.envs.base_env import BaseEnvTimestep
from stride.policy import PPOPolicy
from stride.utils.errors import ConfigError
from stride.utils.registry import POLICY_REGISTRY

OBS, ACT = 4, 2


def _deep(base: dict, patch: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in patch.items():
        out[k] = _deep(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def make_policy(seed: int = 0, net=None, enable_field=None, **patch) -> PPOPolicy:
    user = _deep({"model": {"obs_shape": OBS, "action_shape": ACT, "encoder_hidden_size_list": [16, 16],
                            "actor_head_hidden_size": 16, "critic_head_hidden_size": 16},
                  "collect": {"n_sample": 16}, "learn": {"batch_size": 32, "epoch_per_collect": 2}}, patch)
    cfg = merge_config(PPOPolicy.declared_config(), user)
    torch.manual_seed(seed)
    return PPOPolicy(cfg, model=net, enable_field=enable_field)


class ValueIsFirstObs(nn.Module):
    """V(s) = s[0]; uniform logits: makes GAE checkable by hand."""

    action_space = "discrete"

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))

    def forward(self, obs, mode="compute_actor_critic"):
        return {"logit": torch.zeros(obs.shape[0], ACT) + self.w, "value": obs[:, 0] + self.w}


def _obs(v: float) -> np.ndarray:
    return np.array([v, 0, 0, 0], dtype=np.float32)


def _segment(policy, last_info: dict, last_done: bool) -> list:
    # V(s0..s2) = 1, 2, 3; V(final next_obs) = 4; rewards 1, 0, 2
    out = {"action": np.int64(0), "logit": np.zeros(ACT, dtype=np.float32)}
    trans = []
    for t, r in enumerate([1.0, 0.0, 2.0]):
        done = last_done if t == 2 else False
        info = last_info if t == 2 else {}
        trans.append(policy.collect_mode.process_transition(_obs(t + 1), out, BaseEnvTimestep(_obs(t + 2), r, done, info)))
    return policy.collect_mode.get_train_sample(trans)


GAMMA_LAMBDA = {"discount_factor": 0.9, "gae_lambda": 0.8, "learn": {"value_norm": False}}


def test_registered_on_policy():
    assert POLICY_REGISTRY.get("ppo") is PPOPolicy
    assert PPOPolicy.default_config().on_policy is True
    assert make_policy().collect_mode.on_policy is True


def test_gae_mid_episode_segment_bootstraps_from_last_next_obs():
    p = make_policy(net=ValueIsFirstObs(), **GAMMA_LAMBDA)
    samples = _segment(p, {}, False)
    # deltas 1.8, 0.7, 2+0.9*4-3=2.6 ; A = 3.65184, 2.572, 2.6
    assert [s["adv"] for s in samples] == pytest.approx([3.65184, 2.572, 2.6], abs=1e-5)
    assert [s["value"] for s in samples] == pytest.approx([1, 2, 3])
    assert [s["return"] for s in samples] == pytest.approx([4.65184, 4.572, 5.6], abs=1e-5)
    assert [s["traj_flag"] for s in samples] == [False, False, True]


def test_gae_truncated_episode_bootstraps_from_true_final_obs():
    p = make_policy(net=ValueIsFirstObs(), **GAMMA_LAMBDA)
    samples = _segment(p, {"terminated": False, "truncated": True}, True)
    assert samples[-1]["done"] is False
    assert [s["adv"] for s in samples] == pytest.approx([3.65184, 2.572, 2.6], abs=1e-5)


def test_gae_terminated_episode_does_not_bootstrap():
    p = make_policy(net=ValueIsFirstObs(), **GAMMA_LAMBDA)
    samples = _segment(p, {"terminated": True, "truncated": False}, True)
    assert samples[-1]["done"] is True
    # delta2 = 2 - 3 = -1 ; A1 = 0.7 + 0.72*(-1) = -0.02 ; A0 = 1.8 + 0.72*(-0.02) = 1.7856
    assert [s["adv"] for s in samples] == pytest.approx([1.7856, -0.02, -1.0], abs=1e-5)


def test_gae_values_are_denormalised_with_the_collect_modes_own_statistics():
    p = make_policy(net=ValueIsFirstObs(), discount_factor=0.9, gae_lambda=0.8)
    state = p.collect_mode.state_dict()
    state["return_norm"] = {"mean": 1.0, "var": 4.0, "count": 10.0}
    p.collect_mode.load_state_dict(state)
    samples = _segment(p, {}, False)
    assert [s["value"] for s in samples] == pytest.approx([3.0, 5.0, 7.0], abs=1e-6)  # 2 * V + 1


def test_collect_and_eval_forward_discrete():
    p = make_policy()
    obs = {3: np.zeros(OBS, np.float32), 7: np.ones(OBS, np.float32)}
    out = p.collect_mode.forward(obs)
    assert set(out) == {3, 7}
    assert set(out[3]) == {"action", "logit"} and out[3]["logit"].shape == (ACT,)
    assert 0 <= int(out[3]["action"]) < ACT
    ev = p.eval_mode.forward(obs)
    assert int(ev[7]["action"]) == int(np.argmax(out[7]["logit"]))


def test_collect_samples_follow_the_policy():
    p = make_policy()
    with torch.no_grad():
        p.model.actor_head[-1].bias.copy_(torch.tensor([0.0, 2.0]))  # pi(1) = e^2/(1+e^2) = 0.881
    obs = {i: np.zeros(OBS, np.float32) for i in range(2000)}
    actions = np.array([int(o["action"]) for o in p.collect_mode.forward(obs).values()])
    assert actions.mean() == pytest.approx(0.881, abs=0.03)


def test_continuous_actions_stay_in_range_and_log_prob_uses_raw_sample():
    p = make_policy(model={"action_space": "continuous", "action_shape": 1, "sigma_init": 5.0},
                    action_range=[-2.0, 2.0])
    obs = {i: np.zeros(OBS, np.float32) for i in range(200)}
    out = p.collect_mode.forward(obs)
    acts = np.stack([o["action"] for o in out.values()])
    raws = np.stack([o["raw_action"] for o in out.values()])
    assert acts.shape == (200, 1) and np.all(np.abs(acts) <= 2.0) and np.any(np.abs(raws) > 2.0)
    assert np.allclose(acts, np.clip(raws, -2, 2))
    t = p.collect_mode.process_transition(obs[0], out[0], BaseEnvTimestep(obs[0], -1.0, False, {}))
    assert np.array_equal(t["action"], out[0]["raw_action"]) and set(t["logit"]) == {"mu", "sigma"}
    ev = p.eval_mode.forward({0: np.zeros(OBS, np.float32)})
    mu = p.model(torch.zeros(1, OBS), mode="compute_actor")["logit"]["mu"]
    assert np.allclose(ev[0]["action"], np.clip(mu.detach().numpy()[0], -2, 2))


def _collect_batch(p: PPOPolicy, n_seg: int = 4, seg_len: int = 8, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    data = []
    for _ in range(n_seg):
        obs = {i: rng.standard_normal(OBS).astype(np.float32) for i in range(seg_len + 1)}
        out = p.collect_mode.forward({i: obs[i] for i in range(seg_len)})
        trans = []
        for t in range(seg_len):
            reward = 1.0 if int(out[t]["action"]) == int(obs[t][0] > 0) else 0.0  # reward for a learnable rule
            trans.append(p.collect_mode.process_transition(obs[t], out[t], BaseEnvTimestep(obs[t + 1], reward, False, {})))
        data += p.collect_mode.get_train_sample(trans)
    return data


@pytest.mark.parametrize("recompute", [True, False])
def test_learn_returns_averaged_scalars_and_loss_decreases(recompute):
    p = make_policy(learn={"recompute_adv": recompute, "epoch_per_collect": 4, "learning_rate": 3e-3,
                           "value_norm": False})
    data = _collect_batch(p)
    logs = [p.learn_mode.forward(data) for _ in range(4)]
    keys = {"cur_lr", "total_loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "grad_norm"}
    # scalars: floats, or detached 0-d tensors the learner reads at its log step (no host sync per minibatch)
    assert keys <= set(logs[0]) and all(isinstance(v, float) or (torch.is_tensor(v) and v.dim() == 0 and not v.requires_grad)
                                        for v in logs[0].values())
    assert set(p.learn_mode.monitor_vars()) <= set(logs[0])
    assert logs[-1]["value_loss"] < logs[0]["value_loss"]
    assert logs[0]["approx_kl"] >= 0


def test_policy_improves_on_a_fixed_batch():
    p = make_policy(learn={"epoch_per_collect": 4, "learning_rate": 3e-3, "value_norm": False})
    data = _collect_batch(p, n_seg=8)
    batch = p._io.learn_batch(data)
    adv = batch["adv"]

    def surrogate():
        with torch.no_grad():
            logit = p.model(batch["obs"], mode="compute_actor")["logit"]
            return (torch.log_softmax(logit, -1).gather(1, batch["action"].long()[:, None]).squeeze(1) * adv).mean()

    before = surrogate()
    for _ in range(3):
        p.learn_mode.forward(data)
    assert surrogate() > before


def test_state_dict_round_trip():
    p = make_policy(seed=0)
    p.learn_mode.forward(_collect_batch(p))
    sd = p.learn_mode.state_dict()
    assert set(sd) == {"model", "optimizer", "return_norm", "kl_coef", "schedule_counters"}
    assert sd["return_norm"]["count"] > 1
    q = make_policy(seed=1)
    q.learn_mode.load_state_dict(copy.deepcopy(sd))
    for a, b in zip(p.model.parameters(), q.model.parameters()):
        assert torch.equal(a, b)
    assert q.collect_mode.state_dict()["return_norm"] == sd["return_norm"]
    # learn continues identically
    data = _collect_batch(p, seed=3)
    torch.manual_seed(5)
    la = p.learn_mode.forward(data)
    torch.manual_seed(5)
    lb = q.learn_mode.forward(data)
    assert la == lb
    # collect/eval only policies load the collect state
    c = make_policy(seed=2, enable_field=["collect", "eval"])
    c.collect_mode.load_state_dict(p.collect_mode.state_dict())
    assert c.collect_mode.state_dict()["return_norm"] == p.collect_mode.state_dict()["return_norm"]
    obs = {0: np.ones(OBS, np.float32)}
    assert int(c.eval_mode.forward(obs)[0]["action"]) == int(p.eval_mode.forward(obs)[0]["action"])


def test_lr_anneals_per_collect():
    p = make_policy(learn={"lr_anneal_collects": 4, "learning_rate": 1e-3})
    data = _collect_batch(p, n_seg=2)
    lrs = [p.learn_mode.forward(data)["cur_lr"] for _ in range(3)]
    assert lrs == pytest.approx([1e-3, 7.5e-4, 5e-4])


# ---- schedules and the adaptive KL penalty -----------------------------------------------------------
LINEAR_LR = {"type": "linear", "start": 1e-3, "end": 0.0, "steps": 4}


def test_a_learning_rate_schedule_sets_the_optimizer_and_resume_keeps_its_counter():
    p = make_policy(learn={"learning_rate": LINEAR_LR})
    data = _collect_batch(p)
    lrs = [p.learn_mode.forward(copy.deepcopy(data))["cur_lr"] for _ in range(3)]
    assert lrs == pytest.approx([1e-3, 7.5e-4, 5e-4])
    sd = p.learn_mode.state_dict()
    assert sd["schedule_counters"]["train_iter"] == 3 and sd["optimizer"]["param_groups"][0]["lr"] == pytest.approx(5e-4)
    q = make_policy(seed=1, learn={"learning_rate": LINEAR_LR})
    q.learn_mode.load_state_dict(copy.deepcopy(sd))
    assert [q.learn_mode.forward(copy.deepcopy(data))["cur_lr"] for _ in range(3)] == pytest.approx([2.5e-4, 0.0, 0.0])


def test_lr_anneal_collects_and_a_learning_rate_schedule_are_exclusive():
    with pytest.raises(ConfigError, match="lr_anneal_collects=5 anneals a constant learning_rate"):
        make_policy(learn={"learning_rate": LINEAR_LR, "lr_anneal_collects": 5})


def test_an_env_step_schedule_follows_the_env_steps_the_learner_tells():
    p = make_policy(learn={"learning_rate": {**LINEAR_LR, "steps": 1000, "unit": "env_step"}})
    data = _collect_batch(p)
    p.learn_mode.set_envstep(500)
    assert p.learn_mode.forward(data)["cur_lr"] == pytest.approx(5e-4)


def test_entropy_and_clip_schedules_change_the_values_used():
    ent = {"type": "piecewise", "points": [[0, 0.0], [1, 0.5]]}
    p = make_policy(learn={"entropy_weight": ent, "value_norm": False})
    data = _collect_batch(p)
    for weight in (0.0, 0.5):
        out = {k: float(v) for k, v in p.learn_mode.forward(copy.deepcopy(data)).items()}  # total = policy + 0.5 value - w entropy (per minibatch, averaged)
        assert out["total_loss"] == pytest.approx(out["policy_loss"] + 0.5 * out["value_loss"] - weight * out["entropy"], abs=1e-6)
    # the same run with clip_ratio 0.2 then 0.001: the first update is the same, the second clips more
    fracs = []
    for clip in (0.2, {"type": "piecewise", "points": [[0, 0.2], [1, 0.001]]}):
        q = make_policy(learn={"clip_ratio": clip, "learning_rate": 1e-2})
        torch.manual_seed(3)
        fracs.append([q.learn_mode.forward(copy.deepcopy(data))["clipfrac"] for _ in range(2)])
    assert fracs[0][0] == fracs[1][0] and fracs[1][1] > fracs[0][1]


@pytest.mark.parametrize("target,coef", [(1e-6, 2.0), (10.0, 0.5)])
def test_adaptive_kl_doubles_or_halves_beta_and_saves_it(target, coef):
    p = make_policy(learn={"kl_coef": 1.0, "kl_target": target, "learning_rate": 3e-3})
    out = p.learn_mode.forward(_collect_batch(p))
    assert out["kl"] > 0 and out["kl_coef"] == 1.0 and "kl" in p.learn_mode.monitor_vars()
    sd = p.learn_mode.state_dict()
    assert sd["kl_coef"] == coef
    q = make_policy(seed=1, learn={"kl_coef": 1.0, "kl_target": target})
    q.learn_mode.load_state_dict(copy.deepcopy(sd))
    assert q.learn_mode.forward(_collect_batch(q))["kl_coef"] == coef


def test_adaptive_kl_needs_a_first_beta():
    with pytest.raises(ConfigError, match=r"kl_target=0.01 .* give kl_coef > 0"):
        make_policy(learn={"kl_target": 0.01})


def test_a_checkpoint_from_the_lambdalr_days_resumes_its_annealing():
    p = make_policy(learn={"learning_rate": 1e-3, "lr_anneal_collects": 4})
    data = _collect_batch(p)
    p.learn_mode.forward(copy.deepcopy(data))
    sd = copy.deepcopy(p.learn_mode.state_dict())
    del sd["schedule_counters"], sd["kl_coef"]
    sd["scheduler"] = {"last_epoch": 3, "base_lrs": [1e-3]}  # what LambdaLR's state_dict held after 3 steps
    q = make_policy(seed=1, learn={"learning_rate": 1e-3, "lr_anneal_collects": 4})
    q.learn_mode.load_state_dict(sd)
    assert q.learn_mode.forward(copy.deepcopy(data))["cur_lr"] == 1e-3 * (1.0 - 3 / 4)
