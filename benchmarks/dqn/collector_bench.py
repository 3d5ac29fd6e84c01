"""Collector throughput: Stride's ``SampleCollector`` vs a bare loop, same 8 envs, same model.

Stride: ``DQNPolicy(cfg.policy)`` from the compiled zoo config, ``BaseEnvManager`` over 8
``GymnasiumEnv('CartPole-v1')``, ``SampleCollector(cfg.policy.collect.collector, env,
policy.collect_mode)``, ``collect(n_sample=..., policy_kwargs={'eps': 0.1})``.

Bare: 8 ``gymnasium.make('CartPole-v1')`` in a list; per step one batched forward of the *same*
model class and sizes (``stride.model.DQN``, called directly, ``torch.no_grad``) on the stacked
obs, eps-greedy per sample (eps 0.1), ``env.step``, auto-reset, and the transition
``(obs, action, reward, next_obs, terminated)`` appended to a list.

Reported: env steps per process-CPU second over ``--steps`` env steps after a warm-up.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import cpu, emit, setup_process  # noqa: E402

EPS = 0.1
N_ENVS = 8


def model_kwargs(cfg) -> dict:
    m = cfg.policy.model
    kw = dict(obs_shape=m.obs_shape, action_shape=m.action_shape,
              encoder_hidden_size_list=list(m.encoder_hidden_size_list), dueling=bool(m.dueling))
    if "head_layer_num" in m:
        kw["head_layer_num"] = m.head_layer_num
    return kw


def run_stride(cfg, steps: int, warmup: int, seed: int) -> dict:
    from stride.envs import BaseEnvManager, GymnasiumEnv
    from stride.policy import DQNPolicy
    from stride.worker import SampleCollector

    policy = DQNPolicy(cfg.policy)
    env = BaseEnvManager([lambda: GymnasiumEnv("CartPole-v1") for _ in range(N_ENVS)])
    env.seed(seed)
    collector = SampleCollector(cfg.policy.collect.collector, env, policy.collect_mode)
    collector.collect(n_sample=warmup, policy_kwargs={"eps": EPS})
    e0, c0 = collector.envstep, cpu()
    n = 0
    while collector.envstep - e0 < steps:
        n += len(collector.collect(n_sample=cfg.policy.collect.n_sample, policy_kwargs={"eps": EPS}))
    t = cpu() - c0
    done = collector.envstep - e0
    env.close()
    return {"env_steps": done, "samples": n, "cpu_seconds": t, "steps_per_cpu_s": done / t,
            "n_sample_per_collect": cfg.policy.collect.n_sample}


def run_bare(cfg, steps: int, warmup: int, seed: int) -> dict:
    import gymnasium as gym
    import numpy as np
    import torch
    from stride.model import DQN

    model = DQN(**model_kwargs(cfg))
    model.eval()
    rng = np.random.default_rng(seed)
    envs = [gym.make("CartPole-v1") for _ in range(N_ENVS)]
    obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)]).astype(np.float32)
    n_act = int(envs[0].action_space.n)
    buf: list = []

    def loop(n_steps: int) -> int:
        nonlocal obs
        done = 0
        while done < n_steps:
            with torch.no_grad():
                greedy = model(torch.from_numpy(obs))["logit"].argmax(1).numpy()
            actions = np.where(rng.random(N_ENVS) < EPS, rng.integers(0, n_act, N_ENVS), greedy)
            nxt = obs.copy()
            for i, e in enumerate(envs):
                o2, r, term, trunc, _ = e.step(int(actions[i]))
                buf.append((obs[i], int(actions[i]), float(r), o2, bool(term)))
                nxt[i] = e.reset()[0] if (term or trunc) else o2
            obs = nxt
            done += N_ENVS
        return done

    loop(warmup)
    c0 = cpu()
    done = loop(steps)
    t = cpu() - c0
    return {"env_steps": done, "cpu_seconds": t, "steps_per_cpu_s": done / t}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--which", choices=["stride", "bare"], required=True)
    ap.add_argument("--steps", type=int, default=20_000)
    ap.add_argument("--warmup", type=int, default=800)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)
    from stride.config import compile_config
    from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config

    cfg = compile_config(main_config, create_cfg=create_config, save_cfg=False)
    fn = run_stride if args.which == "stride" else run_bare
    r = fn(cfg, args.steps, args.warmup, args.seed)
    emit({"contestant": "collector_" + args.which, "seed": args.seed, **r, **info}, args.out)


if __name__ == "__main__":
    main()
