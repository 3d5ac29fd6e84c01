"""Bare PyTorch + NumPy SAC on Pendulum-v1: Stride's framework-overhead floor for SAC.

Does the same work as one Stride run (``--spec`` from its result.json / total_config.json): the same
number of envs (a list of gymnasium envs, auto-reset), ``random_collect_size`` uniformly random warm-up
transitions, then collects of ``n_sample`` env steps each followed by ``update_per_collect`` gradient
steps until Stride's train iterations are done; same model sizes (tanh-squashed Gaussian actor, twin
critics, ReLU MLPs), batch size, learning rates, automatic temperature, Polyak target critics, fused
Adam as Stride uses, NumPy ring buffer. Actions in [-1, 1] scaled to the torque range (what Stride's
SAC hands the env, ``policy.action_range``). No evaluation; CPU of the whole loop after set-up.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np

from bench_common.proc import cpu, emit, setup_process


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)
    with open(args.spec) as f:
        sp = json.load(f)

    import gymnasium as gym
    import torch
    import torch.nn.functional as F
    from torch import nn

    def mlp(i, hs, o):
        layers, d = [], i
        for h in hs:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        return nn.Sequential(*layers, nn.Linear(d, o))

    obs_dim, act_dim = 3, 1
    actor = mlp(obs_dim, sp["actor_hidden_size_list"], 2 * act_dim)
    critics = nn.ModuleList([mlp(obs_dim + act_dim, sp["critic_hidden_size_list"], 1) for _ in range(2)])
    target = [p.detach().clone() for p in critics.parameters()]
    log_alpha = torch.tensor(math.log(sp["alpha"]), requires_grad=True)
    q_opt = torch.optim.Adam(critics.parameters(), lr=sp["learning_rate_q"], fused=True)
    pi_opt = torch.optim.Adam(actor.parameters(), lr=sp["learning_rate_policy"], fused=True)
    a_opt = torch.optim.Adam([log_alpha], lr=sp["learning_rate_alpha"], fused=True)
    target_entropy = -float(act_dim)
    gamma, tau, bs = sp["discount_factor"], sp["target_theta"], sp["batch_size"]
    lo, hi = sp["log_sigma_range"]

    def sample(obs):
        mu, log_sigma = actor(obs).chunk(2, dim=-1)
        sigma = log_sigma.clamp(lo, hi).exp()
        u = mu + sigma * torch.randn_like(mu)
        a = torch.tanh(u)
        logp = (-0.5 * ((u - mu) / sigma) ** 2 - sigma.log() - 0.5 * math.log(2 * math.pi)).sum(-1)
        logp = logp - (2 * (math.log(2) - u - F.softplus(-2 * u))).sum(-1)
        return a, logp

    def q_all(params_net, obs, a):
        x = torch.cat([obs, a], -1)
        return torch.stack([c(x).squeeze(-1) for c in params_net])

    tcritics = nn.ModuleList([mlp(obs_dim + act_dim, sp["critic_hidden_size_list"], 1) for _ in range(2)])
    tcritics.load_state_dict(critics.state_dict())
    for p in tcritics.parameters():
        p.requires_grad_(False)
    del target

    N = sp["collector_env_num"]
    cap = sp["replay_buffer_size"]
    B_obs = np.zeros((cap, obs_dim), np.float32)
    B_nobs = np.zeros((cap, obs_dim), np.float32)
    B_act = np.zeros((cap, act_dim), np.float32)
    B_rew = np.zeros(cap, np.float32)
    B_done = np.zeros(cap, np.float32)
    size = ptr = 0
    envs = [gym.make(sp["env_id"]) for _ in range(N)]
    high = float(envs[0].action_space.high[0])
    obs = np.stack([e.reset(seed=args.seed + i)[0] for i, e in enumerate(envs)]).astype(np.float32)
    rng = np.random.default_rng(args.seed)

    def step_all(actions):
        nonlocal size, ptr, obs
        for i, e in enumerate(envs):
            o, r, term, trunc, _ = e.step(actions[i] * high)
            B_obs[ptr], B_nobs[ptr], B_act[ptr], B_rew[ptr], B_done[ptr] = obs[i], o, actions[i], r, float(term)
            ptr = (ptr + 1) % cap
            size = min(size + 1, cap)
            if term or trunc:
                o, _ = e.reset()
            obs[i] = o

    t0 = cpu()
    env_steps = 0
    while env_steps < sp["random_collect_size"]:
        step_all(rng.uniform(-1, 1, (N, act_dim)).astype(np.float32))
        env_steps += N
    per_collect = max(1, sp["n_sample"] // N)
    grad_steps = 0
    while grad_steps < sp["train_iter"]:
        for _ in range(per_collect):
            with torch.no_grad():
                a, _ = sample(torch.from_numpy(obs))
            step_all(a.numpy())
            env_steps += N
        for _ in range(sp["update_per_collect"]):
            if grad_steps >= sp["train_iter"]:
                break
            idx = rng.integers(0, size, bs)
            o, no, a = torch.from_numpy(B_obs[idx]), torch.from_numpy(B_nobs[idx]), torch.from_numpy(B_act[idx])
            r, d = torch.from_numpy(B_rew[idx]), torch.from_numpy(B_done[idx])
            alpha = log_alpha.detach().exp()
            with torch.no_grad():
                na, nlogp = sample(no)
                next_v = q_all(tcritics, no, na).min(0).values - alpha * nlogp
                tgt = r + gamma * (1 - d) * next_v
            q = q_all(critics, o, a)
            critic_loss = ((q - tgt) ** 2).mean(-1).sum()
            q_opt.zero_grad(set_to_none=True)
            critic_loss.backward()
            q_opt.step()
            na, logp = sample(o)
            q_pi = q_all(critics, o, na).min(0).values
            policy_loss = (alpha * logp - q_pi).mean()
            pi_opt.zero_grad(set_to_none=True)
            policy_loss.backward()
            pi_opt.step()
            alpha_loss = -(log_alpha * (logp.detach() + target_entropy)).mean()
            a_opt.zero_grad(set_to_none=True)
            alpha_loss.backward()
            a_opt.step()
            with torch.no_grad():
                torch._foreach_lerp_(list(tcritics.parameters()), list(critics.parameters()), tau)
            grad_steps += 1
    cpu_s = cpu() - t0
    n_params = int(sum(p.numel() for p in actor.parameters()) + sum(p.numel() for p in critics.parameters()))
    emit({"contestant": "floor", "algo": "sac", "seed": args.seed, "spec": sp, "cpu_seconds": cpu_s,
          "env_step_done": env_steps, "train_iter_done": grad_steps, "n_params": n_params, **info}, args.out)


if __name__ == "__main__":
    main()
