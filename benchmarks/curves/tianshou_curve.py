"""Tianshou contestant of the fixed-budget curves, MuJoCo SAC and TD3 only: one case, one seed, trained to
the budget with Tianshou's own trainer, an evaluation every ``--eval-every`` env steps, then the final policy
on ``--final-episodes`` fresh episodes. ``python benchmarks/curves/tianshou_curve.py --case hopper_sac ...``.

Why it exists (issue 32): the MuJoCo targets are Tianshou's published 300k figures, measured on the v3 envs
(mujoco-py). This runs Tianshou itself on the v5 envs Stride and SB3 run, so the anchor can be read on the
same env, budget and evaluation.

Hyper-parameters and networks: Tianshou's ``examples/mujoco/mujoco_sac.py`` / ``mujoco_td3.py`` defaults
(the installed release's; the same values as at ``e605bdea``, the commit its README's tables name), models
built as those scripts build them; one training env (``gymnasium.make``, not EnvPool: EnvPool has no v5).
The loop is its ``OffPolicyTrainer``'s training step (collect one step, one update, within
``policy_within_training_step``) without the trainer itself: Tianshou 2.0.1's trainer checks the whole replay
buffer for NaNs after every env step (``buffer.hasnull()``, a copy of the buffer), so its CPU per step grows
with the buffer (measured here on Hopper SAC: 20 ms per step at 20k transitions, 33 ms at 90k).
Env steps are counted as the harness counts them, the random warm-up included. Tianshou's own trainer
counts from the end of the warm-up, so the point its benchmark tables call 300k is 310k (SAC) or 325k (TD3)
here. Evaluation is the harness's (``bench_common.evaluate``), not Tianshou's test collector: greedy
actions (SAC: the Gaussian's mean, squashed), the same episodes as the other contestants. Curve points carry
train CPU s (process CPU minus the CPU of every evaluation).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import CASES  # noqa: E402

from bench_common.curve import CurveRecorder  # noqa: E402
from bench_common.proc import emit, setup_process  # noqa: E402

#: Tianshou's example defaults (mujoco_sac.py / mujoco_td3.py); both: [256, 256], tau 0.005, gamma 0.99,
#: batch 256, 1 update per env step, 1-step returns, replay 1e6, one training env
SAC = dict(actor_lr=1e-3, critic_lr=1e-3, alpha=0.2, start_timesteps=10_000)
TD3 = dict(actor_lr=3e-4, critic_lr=3e-4, exploration_noise=0.1, policy_noise=0.2, noise_clip=0.5,
           update_actor_freq=2, start_timesteps=25_000)
COMMON = dict(hidden_sizes=[256, 256], tau=0.005, gamma=0.99, batch_size=256, buffer_size=1_000_000, n_step=1)


def build(algo: str, env):
    """``(algorithm, hyper-parameter record)`` as Tianshou's example script builds them."""
    from tianshou.algorithm import SAC as TianshouSAC, TD3 as TianshouTD3
    from tianshou.algorithm.modelfree.ddpg import ContinuousDeterministicPolicy
    from tianshou.algorithm.modelfree.sac import SACPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.exploration import GaussianNoise
    from tianshou.utils.net.common import Net
    from tianshou.utils.net.continuous import (ContinuousActorDeterministic, ContinuousActorProbabilistic,
                                               ContinuousCritic)

    hp = dict(COMMON, **(SAC if algo == "sac" else TD3))
    shape, action_shape = env.observation_space.shape, env.action_space.shape
    max_action = float(env.action_space.high[0])
    critics = [ContinuousCritic(preprocess_net=Net(state_shape=shape, action_shape=action_shape,
                                                   hidden_sizes=hp["hidden_sizes"], concat=True)) for _ in range(2)]
    common = dict(policy_optim=AdamOptimizerFactory(lr=hp["actor_lr"]),
                  critic=critics[0], critic_optim=AdamOptimizerFactory(lr=hp["critic_lr"]),
                  critic2=critics[1], critic2_optim=AdamOptimizerFactory(lr=hp["critic_lr"]),
                  tau=hp["tau"], gamma=hp["gamma"], n_step_return_horizon=hp["n_step"])
    net_a = Net(state_shape=shape, hidden_sizes=hp["hidden_sizes"])
    if algo == "sac":
        actor = ContinuousActorProbabilistic(preprocess_net=net_a, action_shape=action_shape, unbounded=True,
                                             conditioned_sigma=True)
        return TianshouSAC(policy=SACPolicy(actor=actor, action_space=env.action_space), alpha=hp["alpha"],
                           **common), hp
    actor = ContinuousActorDeterministic(preprocess_net=net_a, action_shape=action_shape, max_action=max_action)
    policy = ContinuousDeterministicPolicy(actor=actor, action_space=env.action_space,
                                           exploration_noise=GaussianNoise(sigma=hp["exploration_noise"] * max_action))
    return TianshouTD3(policy=policy, policy_noise=hp["policy_noise"] * max_action, noise_clip=hp["noise_clip"],
                       update_actor_freq=hp["update_actor_freq"], **common), hp


def main() -> None:
    mujoco = sorted(k for k, c in CASES.items() if c.get("algo") in ("sac", "td3") and "overrides" not in c)
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", choices=mujoco, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=int, required=True, help="env steps, the random warm-up included")
    ap.add_argument("--eval-every", type=int, required=True)
    ap.add_argument("--eval-episodes", type=int, default=10)
    ap.add_argument("--final-episodes", type=int, default=100)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)

    import gymnasium as gym
    import tianshou
    import torch
    from tianshou.data import Batch, Collector, CollectStats, ReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.utils.torch_utils import policy_within_training_step

    env_id = CASES[args.case]["env_id"]
    train_envs = DummyVectorEnv([lambda: gym.make(env_id)])
    train_envs.seed(args.seed)
    algorithm, hp = build(CASES[args.case]["algo"], gym.make(env_id))
    warmup = hp["start_timesteps"]
    if args.budget <= warmup:
        raise SystemExit(f"--budget {args.budget} must exceed the random warm-up ({warmup} env steps)")
    policy = algorithm.policy
    buffer = ReplayBuffer(hp["buffer_size"])
    collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)

    def act(batch: np.ndarray) -> np.ndarray:
        with torch.no_grad(), policy_within_training_step(policy, enabled=False):
            return policy.map_action(policy(Batch(obs=batch, info=Batch())).act)

    rec = CurveRecorder("tianshou", args.case, args.seed, args.budget, env_id, args.eval_episodes, act, args.out)
    evaluate = rec.evaluate

    collector.reset()
    collector.collect(n_step=warmup, random=True)
    collector.reset(reset_buffer=False)  # as its trainer starts: fresh episodes, the warm-up kept
    for step in range(warmup, args.budget):
        if step % args.eval_every == 0:
            evaluate(step)
        with policy_within_training_step(policy):  # its OffPolicyTrainer's training step
            collector.collect(n_step=1)
            algorithm.update(buffer=buffer, sample_size=hp["batch_size"])
    evaluate(args.budget)
    train_cpu = rec.train_cpu()
    final = rec.final(args.final_episodes)
    emit({"contestant": "tianshou", "case": args.case, "seed": args.seed, "budget": args.budget,
          "env_step": warmup + int(collector.collect_step), "curve": rec.curve, "train_cpu_seconds": train_cpu,
          "eval_cpu_seconds": rec.eval_cpu, "wall_seconds": rec.wall(),
          "final_returns": final, "hyperparams": hp, "tianshou_version": tianshou.__version__,
          **info}, args.out)
    rec.done()


if __name__ == "__main__":
    main()
