"""The floor: a bare PyTorch + NumPy DQN loop doing the same work as one Stride run.

No framework: N CartPole-v1 envs in a plain Python list (auto-reset), an MLP of the same sizes as
Stride's DQN model (encoder ``encoder_hidden_size_list`` + dueling or plain head), a NumPy ring
buffer sampled by index, double-DQN MSE loss with a target net synced by copy every
``target_update_freq`` gradient steps, Adam. It does exactly Stride's counts: ``env_step``
environment steps (collected ``n_sample`` at a time, one batched forward per vector step, obs ->
tensor every step, eps-greedy per sample with the same eps schedule) and ``train_iter`` gradient
steps of ``batch_size`` (``update_per_collect`` after each collect once the buffer holds a batch;
any remainder after the last collect). It need not learn; it does the same arithmetic.

Input: ``--spec FILE`` (JSON written by bench.py from Stride's result.json + total_config.json) or
the individual flags. Output: process CPU seconds of the loop (from after env/model/buffer creation, as Stride's
``train_cpu_seconds`` starts after its components are built).
"""

from __future__ import annotations

import argparse
import json
import math

from bench_common.proc import cpu, emit, setup_process

DEFAULTS = dict(env_id="CartPole-v1", env_step=10_000, train_iter=3_000, collector_env_num=8,
                encoder_hidden_size_list=[128, 128, 64], dueling=True, head_layer_num=1,
                batch_size=64, update_per_collect=3, n_sample=8, target_update_freq=100, nstep=1,
                discount_factor=0.97, learning_rate=1e-3, replay_buffer_size=10_000,
                eps_start=0.95, eps_end=0.1, eps_decay=10_000, eps_type="exp")


def build_net(obs_dim: int, n_act: int, hidden: list, dueling: bool, head_layers: int):
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            layers, last = [], obs_dim
            for h in hidden:
                layers += [nn.Linear(last, h), nn.ReLU()]
                last = h
            self.encoder = nn.Sequential(*layers)

            def branch(out):
                mods = []
                for _ in range(head_layers):
                    mods += [nn.Linear(last, last), nn.ReLU()]
                return nn.Sequential(*mods, nn.Linear(last, out))

            self.dueling = dueling
            self.adv = branch(n_act)
            self.value = branch(1) if dueling else None

        def forward(self, x):
            f = self.encoder(x)
            a = self.adv(f)
            if not self.dueling:
                return a
            return self.value(f) + a - a.mean(dim=-1, keepdim=True)

    return Net()


def eps_fn(s: dict):
    if s["eps_type"] == "exp":
        return lambda step: s["eps_end"] + (s["eps_start"] - s["eps_end"]) * math.exp(-step / s["eps_decay"])
    if s["eps_type"] == "linear":
        return lambda step: max(s["eps_end"], s["eps_start"] - (s["eps_start"] - s["eps_end"]) * step / s["eps_decay"])
    raise SystemExit(f"unknown eps type {s['eps_type']}")


def run(s: dict, seed: int) -> dict:
    import gymnasium as gym
    import numpy as np
    import torch

    rng = np.random.default_rng(seed)
    n_envs = int(s["collector_env_num"])
    envs = [gym.make(s["env_id"]) for _ in range(n_envs)]
    obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)]).astype(np.float32)
    obs_dim, n_act = obs.shape[1], int(envs[0].action_space.n)
    net = build_net(obs_dim, n_act, list(s["encoder_hidden_size_list"]), bool(s["dueling"]), int(s["head_layer_num"]))
    target = build_net(obs_dim, n_act, list(s["encoder_hidden_size_list"]), bool(s["dueling"]), int(s["head_layer_num"]))
    target.load_state_dict(net.state_dict())
    # torch's default Adam (the per-tensor loop on CPU), as a plain PyTorch user writes it;
    # --fused-adam gives the fused kernel Stride uses (reported beside, for Stride's true overhead)
    opt = torch.optim.Adam(net.parameters(), lr=float(s["learning_rate"]), **({"fused": True} if s.get("fused_adam") else {}))
    n_params = sum(p.numel() for p in net.parameters())

    cap = int(s["replay_buffer_size"])
    b_obs = np.zeros((cap, obs_dim), np.float32)
    b_next = np.zeros((cap, obs_dim), np.float32)
    b_act = np.zeros(cap, np.int64)
    b_rew = np.zeros(cap, np.float32)
    b_done = np.zeros(cap, np.float32)
    b_gamma = np.zeros(cap, np.float32)  # gamma**k of the n-step target
    ptr = size = 0

    nstep, gamma = int(s["nstep"]), float(s["discount_factor"])
    pending = [[] for _ in range(n_envs)]  # per env: last (obs, act, rew) awaiting their n-step target

    def push(o, a, r, no, d, g):
        nonlocal ptr, size
        b_obs[ptr], b_act[ptr], b_rew[ptr], b_next[ptr], b_done[ptr], b_gamma[ptr] = o, a, r, no, d, g
        ptr = (ptr + 1) % cap
        size = min(size + 1, cap)

    def flush(q, next_o, done):
        # emit the oldest pending transition with its (up to) n-step discounted return
        o, a, _ = q[0]
        ret, g = 0.0, 1.0
        for (_, _, r) in q:
            ret += g * r
            g *= gamma
        push(o, a, ret, next_o, done, g)
        q.pop(0)

    get_eps = eps_fn(s)
    E, G = int(s["env_step"]), int(s["train_iter"])
    B, upc, n_sample = int(s["batch_size"]), int(s["update_per_collect"]), int(s["n_sample"])
    tuf = int(s["target_update_freq"])
    steps_per_collect = max(1, math.ceil(n_sample / n_envs))
    env_step = grad_step = 0

    t0 = cpu()  # components built; the clock starts where Stride's does (its training loop)

    def train_step():
        nonlocal grad_step
        idx = rng.integers(0, size, B)
        o = torch.from_numpy(b_obs[idx])
        no = torch.from_numpy(b_next[idx])
        a = torch.from_numpy(b_act[idx])
        r = torch.from_numpy(b_rew[idx])
        d = torch.from_numpy(b_done[idx])
        g = torch.from_numpy(b_gamma[idx])
        q_all = net(torch.cat([o, no]))
        q, next_q_online = q_all[:B], q_all[B:].detach()
        with torch.no_grad():
            next_q_t = target(no)
            tq = next_q_t.gather(1, next_q_online.argmax(1, keepdim=True)).squeeze(1)
            y = r + g * (1.0 - d) * tq
        loss = torch.nn.functional.mse_loss(q.gather(1, a.unsqueeze(1)).squeeze(1), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        grad_step += 1
        if grad_step % tuf == 0:
            target.load_state_dict(net.state_dict())
        return loss

    while env_step < E:
        eps = get_eps(env_step)
        for _ in range(steps_per_collect):
            with torch.no_grad():
                greedy = net(torch.from_numpy(obs)).argmax(1).numpy()
            explore = rng.random(n_envs) < eps
            actions = np.where(explore, rng.integers(0, n_act, n_envs), greedy)
            for i, e in enumerate(envs):
                o2, r, term, trunc, _ = e.step(int(actions[i]))
                q = pending[i]
                q.append((obs[i].copy(), actions[i], r))
                if term or trunc:
                    while q:
                        flush(q, o2, float(term))
                    o2, _ = e.reset()
                elif len(q) == nstep:
                    flush(q, o2, 0.0)
                obs[i] = o2
            env_step += n_envs
            if env_step >= E:
                break
        if size >= B:
            for _ in range(min(upc, G - grad_step)):
                train_step()
    while grad_step < G:  # remainder (none if Stride trained upc per collect throughout)
        train_step()
    t = cpu() - t0
    for e in envs:
        e.close()
    return {"cpu_seconds": t, "env_step_done": env_step, "train_iter_done": grad_step, "n_params": n_params}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--spec", default=None, help="JSON with the keys of DEFAULTS (missing ones default)")
    for k, v in DEFAULTS.items():
        if isinstance(v, list):
            ap.add_argument("--" + k.replace("_", "-"), type=int, nargs="+", default=None)
        else:
            ap.add_argument("--" + k.replace("_", "-"), type=type(v), default=None)
    ap.add_argument("--fused-adam", action="store_true", help="use torch.optim.Adam(fused=True)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)
    s = dict(DEFAULTS)
    if args.spec:
        with open(args.spec) as f:
            s.update({k: v for k, v in json.load(f).items() if k in DEFAULTS and v is not None})
    for k in DEFAULTS:
        v = getattr(args, k)
        if v is not None:
            s[k] = v
    s["fused_adam"] = bool(args.fused_adam)
    r = run(s, args.seed)
    emit({"contestant": "floor", "seed": args.seed, "spec": s, **r, **info}, args.out)


if __name__ == "__main__":
    main()
