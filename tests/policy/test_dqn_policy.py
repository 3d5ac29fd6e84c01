"""stride.policy: Policy base (default_config, modes) and DQNPolicy (loss, targets, transitions, state)."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from torch.overrides import TorchFunctionMode

from stride.config import merge_config, subsection
from stride.envs.base_env import BaseEnvTimestep
from stride.policy import DQNPolicy, Policy
from stride.policy.dqn import DQNConfig, DQNLearnConfig
from stride.utils.errors import ConfigError

OBS, ACT = 4, 3


def _deep(base: dict, patch: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in patch.items():
        out[k] = _deep(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def make_policy(seed: int = 0, enable_field=None, **patch) -> DQNPolicy:
    user = _deep({"model": {"obs_shape": OBS, "action_shape": ACT, "encoder_hidden_size_list": [16, 16]},
                  "collect": {"n_sample": 8}, "learn": {"batch_size": 16}}, patch)
    cfg = merge_config(DQNPolicy.declared_config(), user)
    torch.manual_seed(seed)
    return DQNPolicy(cfg, enable_field=enable_field)


def make_batch(n: int = 32, seed: int = 0, done=None) -> list:
    rng = np.random.default_rng(seed)
    done = rng.random(n) < 0.2 if done is None else done
    return [{"obs": rng.standard_normal(OBS).astype(np.float32), "action": int(rng.integers(ACT)),
             "reward": float(rng.standard_normal()), "next_obs": rng.standard_normal(OBS).astype(np.float32),
             "done": bool(done[i]), "value_gamma": 0.97} for i in range(n)]


def to_columns(batch: list) -> dict:
    return {
        "obs": np.stack([d["obs"] for d in batch]), "action": np.array([d["action"] for d in batch], dtype=np.int64),
        "reward": np.array([d["reward"] for d in batch], dtype=np.float32),
        "next_obs": np.stack([d["next_obs"] for d in batch]), "done": np.array([d["done"] for d in batch]),
        "value_gamma": np.array([d["value_gamma"] for d in batch], dtype=np.float32),
    }


def _params(m):
    return [p.detach().clone() for p in m.parameters()]


# ---- Policy base --------------------------------------------------------------------------------
class TestDefaultConfig:
    def test_merges_parents(self):
        cfg = DQNPolicy.default_config()
        # from Policy
        assert cfg.cuda is False and cfg.priority is False and cfg.priority_IS_weight is False
        # from DQNPolicy
        assert cfg.type == "dqn" and cfg.on_policy is False and cfg.discount_factor == 0.97
        assert cfg.learn.batch_size == 64 and cfg.other.eps.type == "exp"

    def test_subclass_overrides_only_what_it_sets(self):
        @dataclass(frozen=True)
        class MyLearn(DQNLearnConfig):
            batch_size: int = 7

        @dataclass(frozen=True)
        class MyConfig(DQNConfig):
            learn: MyLearn = subsection(MyLearn)

        class MyDQN(DQNPolicy):
            config_view = MyConfig

        cfg = MyDQN.default_config()
        assert cfg.learn.batch_size == 7 and cfg.learn.learning_rate == 1e-3
        with pytest.raises(ConfigError, match="policy.learn.batch_size"):  # the parent's range stays
            merge_config(MyDQN.declared_config(), {"learn": {"batch_size": 0}}, "policy.")
        assert DQNPolicy.default_config().learn.batch_size == 64  # parent untouched
        policy = MyDQN(merge_config(MyDQN.default_config(), {"model": {"obs_shape": 4, "action_shape": 2},
                                                             "collect": {"n_sample": 8}}))
        assert policy.learn_mode.batch_size == 7

    def test_a_config_dict_subclass_still_works_with_a_deprecation_warning(self):
        class MyDQN(DQNPolicy):
            config = dict(learn=dict(batch_size=7), other=dict(eps=dict(end=0.01)))

        with pytest.warns(DeprecationWarning, match="MyDQN.config .* subclass DQNConfig"):
            cfg = MyDQN.default_config()
        assert cfg.learn.batch_size == 7 and cfg.learn.learning_rate == 1e-3
        assert cfg.other.eps.end == 0.01 and cfg.other.eps.start == 0.95

    def test_returns_a_fresh_copy(self):
        a = DQNPolicy.default_config()
        a.learn.batch_size = 1
        a.other.eps.start = 0.0
        b = DQNPolicy.default_config()
        assert b.learn.batch_size == 64 and b.other.eps.start == 0.95

    def test_base_policy_is_abstract_and_has_no_default_model(self):
        with pytest.raises(TypeError):
            Policy({})
        with pytest.raises(NotImplementedError):
            Policy.default_model()


class TestModes:
    API = {
        "learn_mode": {"forward", "reset", "monitor_vars", "state_dict", "load_state_dict"},
        "collect_mode": {"forward", "process_transition", "get_train_sample", "reset", "state_dict",
                         "load_state_dict"},
        "eval_mode": {"forward", "reset", "state_dict", "load_state_dict"},
    }

    @pytest.mark.parametrize("mode", sorted(API))
    def test_mode_exposes_its_calls_and_nothing_of_the_policy(self, mode):
        policy = make_policy()
        m = getattr(policy, mode)
        assert all(callable(getattr(m, name)) for name in self.API[mode])
        assert not hasattr(m, "get_attribute") and not hasattr(m, "model") and not hasattr(m, "cfg")

    def test_all_modes_share_one_model(self):
        policy = make_policy()
        m = policy.model
        assert policy._learn_model.unwrapped() is m and policy._collect_model.unwrapped() is m
        assert policy._eval_model.unwrapped() is m
        assert policy._target_model.unwrapped() is not m

    def test_enable_field(self):
        policy = make_policy(enable_field=["eval"])
        assert not hasattr(policy, "_optimizer")
        out = policy.eval_mode.forward({0: np.zeros(OBS, np.float32)})
        assert 0 <= int(out[0]["action"]) < ACT
        with pytest.raises(ValueError, match="valid choices: collect, eval, learn"):
            make_policy(enable_field=["train"])

    def test_given_model_is_used(self):
        from stride.model import DQN

        model = DQN(OBS, ACT, encoder_hidden_size_list=[8])
        cfg = merge_config(DQNPolicy.default_config(), {"collect": {"n_sample": 4}})
        policy = DQNPolicy(cfg, model=model)
        assert policy.model is model

    def test_settings_are_the_configs_values(self):
        policy = make_policy(nstep=3)
        collect, learn = policy.collect_mode, policy.learn_mode
        assert collect.n_sample == 8 and collect.n_episode is None and learn.batch_size == 16
        assert collect.on_policy is False and learn.priority is False and collect.lookahead == 2
        assert collect.unroll_len == 1 and collect.episode_state() is None
        with pytest.raises(ValueError, match="keeps no episode state"):
            collect.load_episode_state({"hidden": 0})

    def test_monitor_vars_are_keys_of_the_learn_output(self):
        policy = make_policy()
        out = policy.learn_mode.forward(make_batch(8))
        assert set(policy.learn_mode.monitor_vars()) <= set(out)
        # numbers, or detached one-element tensors the learner reads at its log frequency (no per-step host sync)
        assert isinstance(out["cur_lr"], float)
        for key in ("total_loss", "q_value"):
            v = out[key]
            assert isinstance(v, torch.Tensor) and v.dim() == 0 and not v.requires_grad, (key, v)


# ---- learn --------------------------------------------------------------------------------------
class TestLearn:
    def test_td_loss_decreases_on_a_fixed_batch(self):
        policy = make_policy(learn={"target_update_freq": 10 ** 6, "learning_rate": 1e-2})
        batch = make_batch(32)
        losses = [policy.learn_mode.forward(batch)["total_loss"] for _ in range(20)]
        assert losses[-1] < 0.5 * losses[0], losses

    def test_list_of_dicts_and_dict_of_columns_agree(self):
        batch = make_batch(16, seed=3)
        a, b = make_policy(seed=5), make_policy(seed=5)
        for _ in range(3):
            la = a.learn_mode.forward(batch)
            lb = b.learn_mode.forward(to_columns(batch))
            assert float(la["total_loss"]) == pytest.approx(float(lb["total_loss"]), rel=1e-5)
        for p, q in zip(a.model.parameters(), b.model.parameters()):
            assert torch.allclose(p, q, atol=1e-6)

    @pytest.mark.parametrize("done", [True, False])
    def test_double_dqn_target_by_hand(self, done):
        """total_loss = 0.5 * (Q(s,a) - target)^2 with target = r + gamma_v * (1-done) * Q_target(s', argmax Q(s'))."""
        policy = make_policy(seed=1, learn={"target_update_freq": 10 ** 6})
        with torch.no_grad():  # make the target net differ from the online net
            for p in policy._target_model.unwrapped().parameters():
                p.add_(0.3 * torch.randn_like(p))
        item = make_batch(1, seed=7, done=[done])[0]
        item["value_gamma"] = 0.5
        obs, nobs = torch.as_tensor(item["obs"])[None], torch.as_tensor(item["next_obs"])[None]
        with torch.no_grad():
            q = policy.model(obs)["logit"][0, item["action"]].item()
            a_next = policy.model(nobs)["logit"].argmax(-1).item()
            q_next = policy._target_model.unwrapped()(nobs)["logit"][0, a_next].item()
            q_mean = policy.model(obs)["logit"].mean().item()
        target = item["reward"] + (0.0 if done else 0.5 * q_next)
        out = policy.learn_mode.forward([item])
        assert out["total_loss"] == pytest.approx(0.5 * (q - target) ** 2, rel=1e-4, abs=1e-6)
        assert out["q_value"] == pytest.approx(q_mean, rel=1e-5)

    def test_priority_output(self):
        policy = make_policy(priority=True)
        out = policy.learn_mode.forward(make_batch(10))
        pr = np.asarray(out["priority"])
        assert pr.shape == (10,) and (pr >= 0).all()
        assert "priority" not in make_policy().learn_mode.forward(make_batch(10))

    def test_is_weights_scale_the_loss(self):
        policy = make_policy(priority=True, priority_IS_weight=True)
        cols = to_columns(make_batch(8))
        cols["IS"] = np.zeros(8, np.float32)
        before = _params(policy.model)
        assert policy.learn_mode.forward(cols)["total_loss"] == 0.0
        assert all(torch.equal(a, b) for a, b in zip(before, policy.model.parameters()))
        cols["IS"] = np.full(8, 2.0, np.float32)
        p2 = make_policy(priority=True, priority_IS_weight=True)
        p1 = make_policy(priority=True)
        w2 = p2.learn_mode.forward(cols)["total_loss"]
        w1 = p1.learn_mode.forward(cols)["total_loss"]  # IS ignored without priority_IS_weight
        assert float(w2) == pytest.approx(2 * float(w1), rel=1e-5)

    def test_target_update_assign_every_freq(self):
        policy = make_policy(learn={"target_update_type": "assign", "target_update_freq": 2})
        target = policy._target_model.unwrapped()
        t0 = _params(target)
        batch = make_batch(8)
        policy.learn_mode.forward(batch)
        assert all(torch.equal(a, b) for a, b in zip(t0, target.parameters()))
        policy.learn_mode.forward(batch)
        assert all(torch.equal(a, b) for a, b in zip(policy.model.parameters(), target.parameters()))

    def test_target_update_momentum(self):
        policy = make_policy(learn={"target_update_type": "momentum", "target_theta": 0.5})
        target = policy._target_model.unwrapped()
        with torch.no_grad():
            for p in target.parameters():
                p.add_(1.0)
        t0 = _params(target)
        policy.learn_mode.forward(make_batch(8))
        for old, online, new in zip(t0, policy.model.parameters(), target.parameters()):
            assert torch.allclose(new, 0.5 * old + 0.5 * online, atol=1e-6)

    def test_state_dict_round_trip(self):
        batch = make_batch(16)
        a = make_policy(seed=0, learn={"target_update_freq": 3})
        for _ in range(4):
            a.learn_mode.forward(batch)
        sd = a.learn_mode.state_dict()
        assert {"model", "target_model", "optimizer"} <= set(sd)
        b = make_policy(seed=99, learn={"target_update_freq": 3})
        b.learn_mode.load_state_dict(copy.deepcopy(sd))
        for p, q in zip(a.model.parameters(), b.model.parameters()):
            assert torch.equal(p, q)
        for p, q in zip(a._target_model.unwrapped().parameters(), b._target_model.unwrapped().parameters()):
            assert torch.equal(p, q)
        assert b._target_model.update_count == a._target_model.update_count == 4
        # both continue identically (optimizer moments and target counter restored)
        for _ in range(3):
            assert a.learn_mode.forward(batch)["total_loss"] == b.learn_mode.forward(batch)["total_loss"]
        for p, q in zip(a._target_model.unwrapped().parameters(), b._target_model.unwrapped().parameters()):
            assert torch.equal(p, q)

    @pytest.mark.parametrize("mode", ["collect_mode", "eval_mode"])
    def test_collect_eval_state_dict(self, mode):
        a, b = make_policy(seed=0), make_policy(seed=1)
        getattr(b, mode).load_state_dict(getattr(a, mode).state_dict())
        for p, q in zip(a.model.parameters(), b.model.parameters()):
            assert torch.equal(p, q)


# ---- collect / eval -----------------------------------------------------------------------------
class TestCollect:
    def test_forward_keeps_env_ids_and_eps_zero_is_greedy(self):
        policy = make_policy()
        obs = {3: np.ones(OBS, np.float32), 7: -np.ones(OBS, np.float64)}
        out = policy.collect_mode.forward(obs, eps=0.0)
        assert set(out) == {3, 7}
        q = policy.model(torch.tensor(np.stack([obs[3], obs[7]]), dtype=torch.float32))["logit"]
        assert [int(out[3]["action"]), int(out[7]["action"])] == q.argmax(-1).tolist()
        ev = policy.eval_mode.forward(obs)
        assert [int(ev[3]["action"]), int(ev[7]["action"])] == q.argmax(-1).tolist()

    def test_forward_eps_one_explores(self):
        torch.manual_seed(0)
        policy = make_policy()
        obs = {i: np.zeros(OBS, np.float32) for i in range(300)}
        acts = [int(o["action"]) for o in policy.collect_mode.forward(obs, eps=1.0).values()]
        assert set(acts) == set(range(ACT))

    def test_collect_kwargs_eps_schedule_by_env_steps(self):
        policy = make_policy(other={"eps": {"type": "exp", "start": 0.9, "end": 0.1, "decay": 1000}})
        kw = policy.collect_mode.collect_kwargs
        assert kw(0, 0) == {"eps": pytest.approx(0.9)}
        assert kw(1000, 0)["eps"] == pytest.approx(0.8 * math.exp(-1) + 0.1)
        assert kw(1000, 123456)["eps"] == kw(1000, 0)["eps"]  # train_iter does not matter
        lin = make_policy(other={"eps": {"type": "linear", "start": 1.0, "end": 0.2, "decay": 100}})
        assert lin.collect_mode.collect_kwargs(envstep=50)["eps"] == pytest.approx(0.6)

    def test_any_schedule_type_for_eps(self):
        cos = make_policy(other={"eps": {"type": "cosine", "start": 1.0, "end": 0.0, "steps": 100}})
        assert cos.collect_mode.collect_kwargs(envstep=50)["eps"] == pytest.approx(0.5)
        assert make_policy(other={"eps": 0.05}).collect_mode.collect_kwargs(envstep=10 ** 6)["eps"] == 0.05
        # a dict without 'type' keeps the default exp schedule's other keys
        part = make_policy(other={"eps": {"decay": 100}})
        assert part.collect_mode.collect_kwargs(envstep=100)["eps"] == pytest.approx(0.85 * math.exp(-1) + 0.1)

    def test_a_learning_rate_schedule_sets_the_optimizer_and_resume_keeps_its_counter(self):
        lr = {"type": "piecewise", "points": [[0, 1e-3], [2, 1e-4]]}
        p = make_policy(learn={"learning_rate": lr})
        batch = make_batch(16)
        assert [p.learn_mode.forward(batch)["cur_lr"] for _ in range(2)] == pytest.approx([1e-3, 5.5e-4])
        q = make_policy(seed=1, learn={"learning_rate": lr})
        q.learn_mode.load_state_dict(copy.deepcopy(p.learn_mode.state_dict()))
        assert q.learn_mode.forward(batch)["cur_lr"] == pytest.approx(1e-4)

    @pytest.mark.parametrize("done,info,expected", [
        (False, {}, False),
        (True, {"terminated": True, "truncated": False}, True),
        (True, {"terminated": False, "truncated": True}, False),
    ])
    def test_process_transition(self, done, info, expected):
        policy = make_policy()
        obs, nobs = np.zeros(OBS, np.float32), np.ones(OBS, np.float32)
        tr = policy.collect_mode.process_transition(obs, {"action": np.int64(2)}, BaseEnvTimestep(nobs, 1.5, done, info))
        assert tr["done"] is expected
        assert tr["obs"] is obs and tr["next_obs"] is nobs and tr["reward"] == 1.5 and int(tr["action"]) == 2

    def test_process_transition_truncated_flag_alone(self):
        policy = make_policy()
        ts = BaseEnvTimestep(np.ones(OBS, np.float32), 0.0, True, {"truncated": True})
        assert policy.collect_mode.process_transition(np.zeros(OBS, np.float32), {"action": 0}, ts)["done"] is False

    def test_get_train_sample_nstep(self):
        policy = make_policy(nstep=2, discount_factor=0.5)
        traj = [{"obs": i, "action": 0, "reward": float(i + 1), "next_obs": i + 1, "done": i == 2} for i in range(3)]
        out = policy.collect_mode.get_train_sample(traj)
        assert [d["reward"] for d in out] == [1 + 0.5 * 2, 2 + 0.5 * 3, 3.0]
        assert [d["value_gamma"] for d in out] == [0.25, 0.25, 0.5]
        assert [d["next_obs"] for d in out] == [2, 3, 3]


@pytest.mark.parametrize("info,bootstraps", [({"terminated": True, "truncated": False}, False),
                                             ({"terminated": False, "truncated": True}, True),
                                             ({"truncated": True}, True)])
def test_final_step_bootstraps_only_when_truncated(info, bootstraps):
    """process_transition -> n-step data -> learn: the TD target uses Q_target(s') only for truncation."""
    policy = make_policy(seed=2, discount_factor=0.5, learn={"target_update_freq": 10 ** 6})
    obs, nobs = np.full(OBS, 0.1, np.float32), np.full(OBS, -0.7, np.float32)
    tr = policy.collect_mode.process_transition(obs, {"action": np.int64(1)}, BaseEnvTimestep(nobs, 2.0, True, info))
    (sample,) = policy.collect_mode.get_train_sample([tr])
    with torch.no_grad():
        q = policy.model(torch.as_tensor(obs)[None])["logit"][0, 1].item()
        a_next = policy.model(torch.as_tensor(nobs)[None])["logit"].argmax(-1).item()
        q_next = policy._target_model.unwrapped()(torch.as_tensor(nobs)[None])["logit"][0, a_next].item()
    target = 2.0 + (0.5 * q_next if bootstraps else 0.0)
    assert policy.learn_mode.forward([sample])["total_loss"] == pytest.approx(0.5 * (q - target) ** 2, rel=1e-4)


@pytest.mark.parametrize("patch,value", [
    ({"learn": {"target_update_type": "polyak"}}, "polyak"),
    ({"learn": {"loss_type": "l2"}}, "l2"),
    ({"other": {"eps": {"type": "cosine"}}}, "cosine"),
    ({"model": {"activation": "swish"}}, "swish"),
])
def test_bad_choice_values_are_config_errors_before_training(patch, value):
    from stride.config import compile_config
    from stride.utils.errors import ConfigError
    from stride.zoo.cartpole.config import cartpole_dqn_config as zoo

    main = _deep(copy.deepcopy(zoo.main_config), {"policy": patch})
    with pytest.raises(ConfigError, match=value):
        DQNPolicy(compile_config(main, zoo.create_config, save_cfg=False).policy)


# ---- a learner that keeps a GPU busy --------------------------------------------------------------
#: what reads a tensor's value to the host: on a GPU, each waits for every kernel queued before it
HOST_READS = ("item", "__float__", "__int__", "__bool__", "tolist", "numpy", "cpu", "__array__")


class HostReads(TorchFunctionMode):
    """Records each read of a tensor's value to the host made under it (method and builtin calls alike)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in HOST_READS:
            self.reads.append(func.__name__)
        return func(*args, **(kwargs or {}))


class TestNoHostSync:
    @pytest.mark.parametrize("priority", [False, True])
    def test_a_learn_step_reads_only_the_priorities(self, priority):
        """A step queues its work and returns: no loss.item() (the log hook reads at its frequency);
        with PER, the priorities are the one transfer (the buffer needs them now)."""
        policy = make_policy(priority=priority, priority_IS_weight=priority,
                             learn={"grad_clip_norm": 10.0, "loss_type": "huber", "target_update_freq": 2})
        cols = to_columns(make_batch(16))
        if priority:
            cols["IS"] = np.ones(16, np.float32)
        policy.learn_mode.forward(cols)  # the first step makes the optimizer's state
        for _ in range(3):  # (the target copy at step 2 and 4 included)
            with HostReads() as mode:
                out = policy.learn_mode.forward(cols)
            assert mode.reads == (["cpu", "numpy"] if priority else [])
        assert isinstance(out["total_loss"], torch.Tensor) and math.isfinite(float(out["total_loss"]))

    @pytest.mark.parametrize("fields", [["collect"], ["eval"], ["collect", "eval"]])
    def test_acting_policies_stay_on_the_cpu(self, monkeypatch, fields):
        """``cuda=True`` serves learning: a policy without a learn mode (a Ray collector's) acts on the CPU
        even where CUDA is there (here said to be: it must never be touched)."""
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        policy = make_policy(enable_field=fields, cuda=True)
        assert all(p.device.type == "cpu" for p in policy.model.parameters())
        mode = policy.collect_mode if "collect" in fields else policy.eval_mode
        kwargs = {"eps": 0.0} if "collect" in fields else {}
        out = mode.forward({0: np.zeros(OBS, np.float32), 1: np.ones(OBS, np.float32)}, **kwargs)
        assert sorted(out) == [0, 1]

    @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
    def test_on_cuda_a_step_never_waits_and_collectors_get_cpu_weights(self):
        """On a GPU: uint8 frames go to the device as bytes, a step makes no synchronising call (CUDA's
        own sync debug mode refuses them), and the published collect / eval weights are CPU tensors a
        CPU collector loads."""
        from stride.utils.registry import POLICY_REGISTRY

        cfg = merge_config(DQNPolicy.declared_config(), {
            "cuda": True, "model": {"obs_shape": [4, 84, 84], "action_shape": 6},
            "collect": {"n_sample": 8}, "learn": {"batch_size": 8, "grad_clip_norm": 10.0, "loss_type": "huber"}})
        learner = POLICY_REGISTRY.get("dqn")(cfg)
        assert next(learner.model.parameters()).device.type == "cuda"
        rng = np.random.default_rng(0)
        cols = {"obs": rng.integers(0, 255, (8, 4, 84, 84), dtype=np.uint8),
                "next_obs": rng.integers(0, 255, (8, 4, 84, 84), dtype=np.uint8),
                "action": rng.integers(0, 6, 8), "reward": rng.standard_normal(8).astype(np.float32),
                "done": rng.random(8) < 0.1}
        learner.learn_mode.forward(cols)
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            for _ in range(3):
                out = learner.learn_mode.forward(cols)
        finally:
            torch.cuda.set_sync_debug_mode("default")
        assert out["total_loss"].device.type == "cuda"
        for state in (learner.collect_mode.state_dict(), learner.eval_mode.state_dict()):
            assert all(t.device.type == "cpu" for t in state["model"].values())
        actor = POLICY_REGISTRY.get("dqn")(cfg, enable_field=["collect"])
        assert next(actor.model.parameters()).device.type == "cpu"
        actor.collect_mode.load_state_dict(learner.collect_mode.state_dict())
        obs = {0: cols["obs"][0], 1: cols["obs"][1]}
        mine, theirs = actor.collect_mode.forward(obs, eps=0.0), learner.collect_mode.forward(obs, eps=0.0)
        assert [mine[i]["action"] for i in (0, 1)] == [theirs[i]["action"] for i in (0, 1)]
