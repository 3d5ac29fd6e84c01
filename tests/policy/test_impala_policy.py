"""stride.policy.IMPALAPolicy: collect records behaviour log-probs, train samples are padded and masked
unrolls (truncation bootstraps from the true final obs, termination never does), the learn step equals
v-trace computed unroll by unroll, the sample collector cuts whole unrolls, config errors are one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from stride.config import merge_config
from stride.envs import BaseEnvManager, GymnasiumEnv
from stride.envs.base_env import BaseEnvTimestep
from stride.policy import IMPALAPolicy
from stride.rl_utils import vtrace_error
from stride.utils.errors import ConfigError
from stride.utils.registry import POLICY_REGISTRY
from stride.worker import SampleCollector
from .logs import numbers

OBS, ACT = 4, 3


def make_policy(seed: int = 0, continuous: bool = False, enable_field=None, **patch) -> IMPALAPolicy:
    model = {"obs_shape": OBS, "action_shape": ACT, "encoder_hidden_size_list": [16, 16],
             "actor_head_hidden_size": 16, "critic_head_hidden_size": 16}
    if continuous:
        model["action_space"] = "continuous"
    user = {"model": model, "collect": {"n_sample": 4, "unroll_len": 3}}
    for k, v in patch.items():
        user[k] = {**user.get(k, {}), **v} if isinstance(v, dict) else v
    cfg = merge_config(IMPALAPolicy.declared_config(), user)
    torch.manual_seed(seed)
    return IMPALAPolicy(cfg, enable_field=enable_field)


def _transitions(p: IMPALAPolicy, n: int, end: str | None, seed: int = 0) -> list:
    """``n`` transitions of one env; the last ends the episode by ``end`` ('terminated' / 'truncated') or not."""
    rng = np.random.default_rng(seed)
    obs = [rng.standard_normal(OBS).astype(np.float32) for _ in range(n + 1)]
    out = p.collect_mode.forward({i: obs[i] for i in range(n)})
    trans = []
    for t in range(n):
        last = t == n - 1 and end is not None
        info = {"terminated": end == "terminated", "truncated": end == "truncated"} if last else {}
        ts = BaseEnvTimestep(obs[t + 1], float(t + 1), last, info)
        trans.append(p.collect_mode.process_transition(obs[t], out[t], ts))
    return trans


def test_registered_with_di_engine_defaults_and_no_ppo_keys():
    assert POLICY_REGISTRY.get("impala") is IMPALAPolicy
    cfg = IMPALAPolicy.default_config()
    assert cfg.on_policy is False and cfg.lambda_ == 0.95 and cfg.collect.unroll_len == 32
    assert (cfg.learn.rho_clip, cfg.learn.c_clip, cfg.learn.rho_pg_clip) == (1.0, 1.0, 1.0)
    assert cfg.other.replay_buffer.max_use == 16 and cfg.learn.optimizer == "adam"
    for key in ("epoch_per_collect", "clip_ratio", "gae_lambda"):
        assert key not in cfg.learn and key not in cfg
    with pytest.raises(ConfigError, match="clip_ratio"):
        merge_config(cfg, {"learn": {"clip_ratio": 0.2}})
    with pytest.raises(ConfigError, match="'sgd'.*; valid choices: adam, rmsprop"):
        make_policy(learn={"optimizer": "sgd"})


def test_collect_records_the_behaviour_log_prob_as_plain_numbers():
    p = make_policy()
    obs = {i: np.random.default_rng(i).standard_normal(OBS).astype(np.float32) for i in range(5)}
    out = p.collect_mode.forward(obs)
    logits = p.model(torch.as_tensor(np.stack(list(obs.values()))), mode="compute_actor")["logit"].detach()
    for i, o in out.items():
        assert isinstance(o["action"], np.integer) and isinstance(o["log_prob"], np.floating)
        expected = torch.log_softmax(logits[i], -1)[int(o["action"])].item()
        assert float(o["log_prob"]) == pytest.approx(expected, abs=1e-6)


def test_a_truncated_episode_is_padded_and_bootstraps_from_its_final_obs():
    p = make_policy()
    trans = _transitions(p, 5, "truncated")
    samples = p.collect_mode.get_train_sample(trans)
    assert len(samples) == 2
    first, second = samples
    assert first["obs"].shape == (4, OBS) and first["mask"].tolist() == [1, 1, 1]
    np.testing.assert_array_equal(first["obs"][3], trans[2]["next_obs"])  # mid-episode: bootstrap from x_3
    assert first["done"].tolist() == [False, False, False]
    # 2 real steps, one padded; x_2 of the unroll is the true final observation, not terminal
    assert second["mask"].tolist() == [1, 1, 0] and second["done"].tolist() == [False, False, True]
    np.testing.assert_array_equal(second["obs"][2], trans[4]["next_obs"])
    assert second["reward"].tolist() == [4.0, 5.0, 0.0]
    assert second["log_prob"][:2].tolist() == pytest.approx([trans[3]["log_prob"], trans[4]["log_prob"]])
    assert all(s[k].dtype == d for s in samples for k, d in (("log_prob", np.float32), ("mask", np.float32)))


def test_a_terminated_episode_never_bootstraps():
    p = make_policy()
    samples = p.collect_mode.get_train_sample(_transitions(p, 3, "terminated"))
    assert len(samples) == 1 and samples[0]["done"].tolist() == [False, False, True]
    assert samples[0]["mask"].tolist() == [1, 1, 1]


def test_learn_step_equals_vtrace_computed_unroll_by_unroll():
    p = make_policy(learn={"entropy_weight": 0.1, "grad_clip_norm": None}, lambda_=0.9, discount_factor=0.8)
    samples = (p.collect_mode.get_train_sample(_transitions(p, 5, "truncated", seed=1))
               + p.collect_mode.get_train_sample(_transitions(p, 4, "terminated", seed=2)))
    assert len(samples) == 4
    # the expected loss: the model run on each unroll alone, the unrolls stacked time-major by hand
    logits, values = [], []
    with torch.no_grad():
        for s in samples:
            out = p.model(torch.as_tensor(s["obs"]), mode="compute_actor_critic")
            logits.append(out["logit"][:-1])
            values.append(out["value"])

    def col(key, dtype=torch.float32):
        return torch.stack([torch.as_tensor(s[key]) for s in samples], dim=1).to(dtype)

    expected = vtrace_error(torch.stack(logits, 1), col("action", torch.int64), col("log_prob"), torch.stack(values, 1),
                            col("reward"), col("done"), 0.8, 0.9, 1.0, 1.0, 1.0, col("mask"))
    before = [q.detach().clone() for q in p.model.parameters()]
    log = p.learn_mode.forward(samples)
    assert log["policy_loss"] == pytest.approx(expected.policy_loss.item(), abs=1e-5)
    assert log["value_loss"] == pytest.approx(expected.value_loss.item(), abs=1e-5)
    assert log["entropy"] == pytest.approx(expected.entropy_loss.item(), abs=1e-5)
    assert log["total_loss"] == pytest.approx(
        (expected.policy_loss + 0.5 * expected.value_loss - 0.1 * expected.entropy_loss).item(), abs=1e-5)
    assert any(not torch.equal(a, b) for a, b in zip(before, p.model.parameters()))


def test_learn_takes_the_replay_buffers_dict_of_columns():
    p = make_policy()
    samples = p.collect_mode.get_train_sample(_transitions(p, 6, None))
    columns = {k: np.stack([s[k] for s in samples]) for k in samples[0]}
    a, b = make_policy(), make_policy()
    assert numbers(a.learn_mode.forward(samples)) == pytest.approx(numbers(b.learn_mode.forward(columns)))


def test_continuous_actions_collect_and_learn():
    p = make_policy(continuous=True, action_range=[-1.0, 1.0])
    trans = _transitions(p, 4, "truncated")
    assert all(t["action"].shape == (ACT,) and isinstance(t["log_prob"], float) for t in trans)
    samples = p.collect_mode.get_train_sample(trans)
    assert samples[0]["action"].shape == (3, ACT)
    log = p.learn_mode.forward(samples)
    assert all(np.isfinite(v) for v in log.values())


def test_state_dicts_round_trip():
    a, b = make_policy(seed=0), make_policy(seed=1)
    a.learn_mode.forward(a.collect_mode.get_train_sample(_transitions(a, 6, None)))
    b.learn_mode.load_state_dict(a.learn_mode.state_dict())
    for x, y in zip(a.model.parameters(), b.model.parameters()):
        assert torch.equal(x, y)
    c = make_policy(seed=2, enable_field=["collect", "eval"])  # an actor: no optimizer
    c.collect_mode.load_state_dict(a.collect_mode.state_dict())
    assert all(torch.equal(x, y) for x, y in zip(a.model.parameters(), c.model.parameters()))


@pytest.mark.parametrize("patch,match", [({"random_collect_size": 64}, "random_collect_size=64"),
                                         ({"collect": {"n_episode": 2}}, "'collect.n_episode'; valid keys here: n_sample, unroll_len")])
def test_unsupported_settings_are_one_line_errors(patch, match):
    with pytest.raises(ConfigError, match=match) as err:
        make_policy(**patch)
    assert "\n" not in str(err.value) and "valid" in str(err.value)


def test_the_sample_collector_cuts_whole_unrolls():
    p = make_policy(model={"obs_shape": 4, "action_shape": 2})
    envs = BaseEnvManager([lambda: GymnasiumEnv("CartPole-v1") for _ in range(2)], {})
    envs.seed(0)
    collector = SampleCollector({}, envs, p.collect_mode)
    try:
        samples = collector.collect(n_sample=40)  # segments of 3 * 20 steps per env: CartPole episodes end inside
        assert len(samples) == 40 and all(s["obs"].shape == (4, 4) for s in samples)
        padded = [s for s in samples if s["mask"].sum() < 3]
        assert padded, "no episode ended inside an unroll: the padding is not exercised"
        for s in padded:  # only an episode's end pads an unroll (a random CartPole episode terminates)
            real = int(s["mask"].sum())
            assert s["mask"].tolist() == [1.0] * real + [0.0] * (3 - real) and bool(s["done"][real - 1])
        whole = [s for s in samples if s["mask"].sum() == 3 and not s["done"].any()]
        assert len(whole) > len(padded)  # mid-episode cuts at multiples of unroll_len: whole unrolls
    finally:
        envs.close()


@pytest.mark.parametrize("name,cls,eps", [("adam", torch.optim.Adam, 1e-8), ("rmsprop", torch.optim.RMSprop, 1e-5)])
def test_the_optimizer_is_the_configured_one(name, cls, eps):
    p = make_policy(learn={"optimizer": name, "learning_rate": 6e-4})
    group = p.learn_mode.state_dict()["optimizer"]["param_groups"][0]
    assert group["lr"] == 6e-4 and group["eps"] == eps and ("alpha" in group) == (cls is torch.optim.RMSprop)


def test_masked_observations_collect_legal_actions_and_learn():
    """PettingZoo's ``{'observation', 'action_mask'}``: unrolls stack each key, illegal actions are never taken."""
    p = make_policy()
    rng = np.random.default_rng(0)
    obs = [{"observation": rng.standard_normal(OBS).astype(np.float32), "action_mask": np.array([True, False, True])}
           for _ in range(31)]
    out = p.collect_mode.forward({i: obs[i] for i in range(30)})
    assert all(int(o["action"]) != 1 for o in out.values())
    trans = [p.collect_mode.process_transition(obs[t], out[t], BaseEnvTimestep(obs[t + 1], 1.0, False, {}))
             for t in range(30)]
    samples = p.collect_mode.get_train_sample(trans)
    assert samples[0]["obs"]["observation"].shape == (4, OBS) and samples[0]["obs"]["action_mask"].shape == (4, 3)
    log = p.learn_mode.forward(samples)
    assert log["entropy"] == pytest.approx(np.log(2), abs=1e-3)  # near-uniform over the two legal actions


def test_learning_rate_and_entropy_schedules():
    ent = {"type": "piecewise", "points": [[0, 0.0], [1, 0.5]]}
    p = make_policy(learn={"learning_rate": {"type": "linear", "start": 1e-3, "end": 5e-4, "steps": 1}, "entropy_weight": ent})
    samples = p.collect_mode.get_train_sample(_transitions(p, 6, None))
    for lr, weight in ((1e-3, 0.0), (5e-4, 0.5)):
        out = numbers(p.learn_mode.forward(samples))
        assert out["cur_lr"] == pytest.approx(lr)
        assert out["total_loss"] == pytest.approx(out["policy_loss"] + 0.5 * out["value_loss"] - weight * out["entropy"], abs=1e-6)
