"""Collector throughput: Stride's ``SampleCollector`` vs a bare loop, same 8 envs, same model weights.

Stride: ``DQNPolicy(cfg.policy)`` from the compiled zoo config, ``BaseEnvManager`` over 8
``GymnasiumEnv('CartPole-v1')`` (per-episode seeds, as in training), ``SampleCollector(
cfg.policy.collect.collector, env, policy.collect_mode)``, ``collect(n_sample=...,
policy_kwargs={'eps': 0.1})``.

Bare: 8 ``gymnasium.make('CartPole-v1', disable_env_checker=True)`` (as ``GymnasiumEnv`` makes
them) in a list, seeded once; per step one batched forward of the same model class with the *same
weights* as Stride's (``stride.model.DQN`` called directly, ``torch.no_grad``) on the stacked obs,
eps-greedy per sample (eps 0.1), ``env.step``, auto-reset, and the transition
``(obs, action, reward, next_obs, terminated)`` appended to a list.

``--model initial``: the freshly initialised Q-net (its greedy action is nearly constant, so
CartPole episodes last ~10 steps: the worst case for per-episode costs). ``--model trained``: the
Q-net of a Stride DQN run of this seed trained to the stop value first (episodes of hundreds of
steps, what the collector sees for most of a run). Identical weights make both contestants see
the same episode-length distribution; the mean episode length of each is reported.

Both run in the same process, alternating in ``--chunks`` chunks of ``--steps / --chunks`` env
steps each (order flipped every pair), so load changes on this shared machine hit both alike.
Reported: env steps per process-CPU second of each, summed over the chunks, and the median of
the per-pair throughput ratios.
"""

from __future__ import annotations

import argparse
import os

from bench_common.proc import cpu, emit, setup_process

EPS = 0.1
N_ENVS = 8


def model_kwargs(cfg) -> dict:
    m = cfg.policy.model
    kw = dict(obs_shape=m.obs_shape, action_shape=m.action_shape,
              encoder_hidden_size_list=list(m.encoder_hidden_size_list), dueling=bool(m.dueling))
    if "head_layer_num" in m:
        kw["head_layer_num"] = m.head_layer_num
    return kw


def make_stride(cfg, seed: int, weights: dict, episodes: list):
    from stride.envs import BaseEnvManager, GymnasiumEnv
    from stride.policy import DQNPolicy
    from stride.worker import SampleCollector

    policy = DQNPolicy(cfg.policy)
    policy.collect_mode.load_state_dict({"model": weights})
    env = BaseEnvManager([lambda: GymnasiumEnv("CartPole-v1") for _ in range(N_ENVS)])
    env.seed(seed)
    collector = SampleCollector(cfg.policy.collect.collector, env, policy.collect_mode)
    n_sample = cfg.policy.collect.n_sample

    def loop(n_steps: int) -> int:
        e0, ep0 = collector.envstep, collector.episode_count
        while collector.envstep - e0 < n_steps:
            collector.collect(n_sample=n_sample, policy_kwargs={"eps": EPS})
        episodes.append(collector.episode_count - ep0)
        return collector.envstep - e0

    return loop, env.close


def make_bare(cfg, seed: int, weights: dict, episodes: list):
    import gymnasium as gym
    import numpy as np
    import torch
    from stride.model import DQN

    model = DQN(**model_kwargs(cfg))
    model.load_state_dict(weights)
    model.eval()
    rng = np.random.default_rng(seed)
    envs = [gym.make("CartPole-v1", disable_env_checker=True) for _ in range(N_ENVS)]  # as GymnasiumEnv makes them
    obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)]).astype(np.float32)
    n_act = int(envs[0].action_space.n)
    buf: list = []

    def loop(n_steps: int) -> int:
        nonlocal obs, buf
        done = n_done = 0
        while done < n_steps:
            with torch.no_grad():
                greedy = model(torch.from_numpy(obs))["logit"].argmax(1).numpy()
            actions = np.where(rng.random(N_ENVS) < EPS, rng.integers(0, n_act, N_ENVS), greedy)
            nxt = obs.copy()
            for i, e in enumerate(envs):
                a = actions[i]
                o2, r, term, trunc, _ = e.step(a)
                buf.append((obs[i], a, float(r), o2, bool(term)))
                if term or trunc:
                    nxt[i] = e.reset()[0]
                    n_done += 1
                else:
                    nxt[i] = o2
            obs = nxt
            done += N_ENVS
        if len(buf) > 100_000:
            buf = []
        episodes.append(n_done)
        return done

    def close() -> None:
        for e in envs:
            e.close()

    return loop, close


def model_weights(cfg, which: str, seed: int) -> dict:
    """The Q-net weights both contestants use: freshly initialised, or trained to the stop value."""
    import tempfile

    from stride.policy import DQNPolicy

    if which == "initial":
        return DQNPolicy(cfg.policy).collect_mode.state_dict()["model"]
    from stride.entry import serial_pipeline
    from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config

    with tempfile.TemporaryDirectory() as d:
        policy = serial_pipeline([main_config, create_config], seed=seed, exp_name=os.path.join(d, "exp"), progress=False)
    return policy.collect_mode.state_dict()["model"]


def run(cfg, steps: int, chunks: int, warmup: int, seed: int, weights: dict) -> dict:
    import statistics

    episodes = {"stride": [], "bare": []}
    loops = {"stride": make_stride(cfg, seed, weights, episodes["stride"]),
             "bare": make_bare(cfg, seed, weights, episodes["bare"])}
    for loop, _ in loops.values():
        loop(warmup)
    per_chunk = max(N_ENVS, steps // chunks)
    done = {k: 0 for k in loops}
    secs = {k: 0.0 for k in loops}
    ratios = []
    for c in range(chunks):
        rate = {}
        for k in (("stride", "bare") if c % 2 == 0 else ("bare", "stride")):
            c0 = cpu()
            n = loops[k][0](per_chunk)
            t = cpu() - c0
            done[k] += n
            secs[k] += t
            rate[k] = n / t
        ratios.append(rate["stride"] / rate["bare"])
    for _, close in loops.values():
        close()
    return {"chunks": chunks, "steps_per_chunk": per_chunk,
            "stride": {"env_steps": done["stride"], "cpu_seconds": secs["stride"],
                       "steps_per_cpu_s": done["stride"] / secs["stride"]},
            "bare": {"env_steps": done["bare"], "cpu_seconds": secs["bare"],
                     "steps_per_cpu_s": done["bare"] / secs["bare"]},
            "ratio_total": (done["stride"] / secs["stride"]) / (done["bare"] / secs["bare"]),
            "mean_episode_length": {k: done[k] / max(1, sum(v[1:])) for k, v in episodes.items()},  # [0]: warm-up
            "ratio_median_of_pairs": statistics.median(ratios), "n_sample_per_collect": cfg.policy.collect.n_sample}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40_000, help="env steps per contestant, over all chunks")
    ap.add_argument("--chunks", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=800)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", choices=["initial", "trained"], default="initial")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)
    from stride.config import compile_config
    from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config

    cfg = compile_config(main_config, create_cfg=create_config, save_cfg=False)
    weights = model_weights(cfg, args.model, args.seed)
    r = run(cfg, args.steps, args.chunks, args.warmup, args.seed, weights)
    emit({"contestant": "collector", "seed": args.seed, "model": args.model, **r, **info}, args.out)


if __name__ == "__main__":
    main()
