"""Policy.sync_gradients / policy.learn.multi_gpu: two learner replicas, each given one half of a batch,
make the same update as one learner given the whole batch (issue 16's must-hold).

What "equal" means: every loss here is a mean over the batch, so the mean of the two halves'
gradients is the whole batch's gradient, and the replicas clip (after averaging) and step exactly as
the single learner does. Statistics a policy takes from its batch before the loss -- PPO's and
A2C's advantage normalisation, their running return statistics (``value_norm``) -- are taken over
the union of the replicas' (mini)batches (unlike DI-engine, whose replicas normalise their own
halves), so PPO runs here with its defaults (both on, advantages recomputed between 2 epochs): one
minibatch per replica per epoch, half of the single learner's one minibatch. The replicas start
from different seeds: ``multi_gpu`` broadcasts rank 0's weights first.
"""

from __future__ import annotations

import copy
import os

import numpy as np
import pytest
import torch

from stride.config import compile_config
from stride.policy import A2CPolicy, DDPGPolicy, DQNPolicy, IMPALAPolicy, PPOPolicy, Policy
from stride.torch_utils import dist as sdist
from stride.utils.errors import ConfigError
from stride.zoo.cartpole.config import cartpole_a2c_config, cartpole_dqn_config, cartpole_impala_config, cartpole_ppo_config
from stride.zoo.pendulum.config import pendulum_ddpg_config

N = 32  # whole batch; each replica learns on N // 2
SEED0 = 100  # rank 0's model seed (rank 1 starts from SEED0 + 1)


def _policy(name: str, seed: int, multi_gpu: bool, batch_size: int) -> Policy:
    module, cls = {"dqn": (cartpole_dqn_config, DQNPolicy), "ppo": (cartpole_ppo_config, PPOPolicy),
                   "a2c": (cartpole_a2c_config, A2CPolicy), "ddpg": (pendulum_ddpg_config, DDPGPolicy),
                   "impala": (cartpole_impala_config, IMPALAPolicy)}[name]
    main = copy.deepcopy(module.main_config)
    learn = main["policy"]["learn"]
    learn.update(multi_gpu=multi_gpu, grad_clip_norm=0.05)  # small: the clip is active
    if name != "a2c":  # A2C learns on its whole batch at once
        learn.update(batch_size=batch_size)
    if name == "ppo":
        learn.update(epoch_per_collect=2, adv_norm=True, value_norm=True, recompute_adv=True)
    if name == "a2c":
        learn.update(adv_norm=True, value_norm=True)
    cfg = compile_config(main, create_cfg=copy.deepcopy(module.create_config), save_cfg=False)
    torch.manual_seed(seed)
    return cls(cfg.policy, enable_field=["learn"])


def _batch(name: str) -> dict:
    rng = np.random.default_rng(0)
    f32 = np.float32
    if name == "ddpg":
        obs = rng.standard_normal((N, 3)).astype(f32)
        return {"obs": obs, "action": rng.uniform(-1, 1, (N, 1)).astype(f32), "reward": rng.standard_normal(N).astype(f32),
                "next_obs": rng.standard_normal((N, 3)).astype(f32), "done": rng.random(N) < 0.2}
    batch = {"obs": rng.standard_normal((N, 4)).astype(f32), "action": rng.integers(0, 2, N),
             "reward": rng.standard_normal(N).astype(f32), "next_obs": rng.standard_normal((N, 4)).astype(f32),
             "done": rng.random(N) < 0.2}
    if name == "impala":  # N unrolls of T steps (obs: T + 1 rows); full masks, so each half holds half the steps
        T = 4
        return {"obs": rng.standard_normal((N, T + 1, 4)).astype(f32), "action": rng.integers(0, 2, (N, T)),
                "log_prob": np.log(rng.uniform(0.2, 0.8, (N, T))).astype(f32),
                "reward": rng.standard_normal((N, T)).astype(f32), "done": rng.random((N, T)) < 0.1,
                "mask": np.ones((N, T), dtype=f32)}
    if name in ("ppo", "a2c"):
        value = rng.standard_normal(N).astype(f32)
        adv = rng.standard_normal(N).astype(f32)
        batch.update(logit=rng.standard_normal((N, 2)).astype(f32), value=value, adv=adv, **{"return": value + adv},
                     traj_flag=np.arange(N) % 8 == 7)
    return batch


def _half(batch: dict, rank: int) -> dict:
    part = slice(rank * N // 2, (rank + 1) * N // 2)
    return {k: v[part] for k, v in batch.items()}


def _params(policy: Policy) -> list:
    return [p.detach().clone() for p in policy.model.parameters()]


ALGOS = ("dqn", "ppo", "a2c", "ddpg", "impala")


def _replica(rank: int, port: int, out: str) -> None:
    torch.set_num_threads(1)
    sdist.dist_init(rank=rank, world_size=2, port=port, backend="gloo", timeout_s=60)
    try:
        result = {}
        for name in ALGOS:
            policy = _policy(name, SEED0 + rank, multi_gpu=True, batch_size=N // 2)
            result[f"{name}_start"] = _params(policy)
            policy.learn_mode.forward(_half(_batch(name), rank))
            result[name] = _params(policy)
        # PPO replicas whose collects make different numbers of minibatches are stopped, on both
        policy = _policy("ppo", SEED0, multi_gpu=True, batch_size=4)
        try:
            policy.learn_mode.forward(_half(_batch("ppo"), rank) if rank == 0 else _batch("ppo"))
        except ConfigError as e:
            result["mismatch"] = str(e)
        torch.save(result, os.path.join(out, f"{rank}.pt"))
    finally:
        sdist.dist_finalize()


@pytest.fixture(scope="module")
def replicas(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("replicas"))
    torch.multiprocessing.spawn(_replica, args=(sdist.free_port(), out), nprocs=2, join=True)
    return [torch.load(os.path.join(out, f"{r}.pt"), weights_only=True) for r in range(2)]


def _max_diff(a: list, b: list) -> float:
    return max(float((x - y).abs().max()) for x, y in zip(a, b))


@pytest.mark.parametrize("name", ALGOS)
def test_two_replicas_on_halves_equal_one_learner_on_the_whole_batch(replicas, name):
    single = _policy(name, SEED0, multi_gpu=False, batch_size=N)
    start = _params(single)
    single.learn_mode.forward(_batch(name))
    whole = _params(single)
    for r in replicas:
        assert _max_diff(r[f"{name}_start"], start) == 0.0  # rank 0's weights, broadcast
        assert _max_diff(r[name], whole) < 1e-6
    # not trivially equal: the update moved the weights, and half a batch alone moves them elsewhere
    assert _max_diff(whole, start) > 1e-4
    alone = _policy(name, SEED0, multi_gpu=False, batch_size=N // 2)
    alone.learn_mode.forward(_half(_batch(name), 0))
    assert _max_diff(_params(alone), whole) > 1e-5


def test_replicas_with_different_minibatch_counts_are_stopped(replicas):
    for rank, mine in ((0, 4), (1, 8)):  # 16 and 32 samples in minibatches of 4
        assert replicas[rank]["mismatch"] == (
            "learner replicas disagree on the minibatches per epoch (samples per collect / batch_size 4): "
            f"from 4 to 8 (this replica: {mine}); they must be equal on every replica")


def test_multi_gpu_without_a_process_group_says_how_to_launch():
    with pytest.raises(ConfigError, match=r"policy.learn.multi_gpu=True needs a torch.distributed process group: "
                                          r"launch one process per replica with torchrun"):
        _policy("dqn", 0, multi_gpu=True, batch_size=N)


def test_sync_gradients_is_a_no_op_in_a_single_process():
    policy = _policy("dqn", 0, multi_gpu=False, batch_size=N)
    for p in policy.model.parameters():
        p.grad = torch.ones_like(p)
    policy.sync_gradients(policy.model)
    assert all(torch.equal(p.grad, torch.ones_like(p)) for p in policy.model.parameters())
