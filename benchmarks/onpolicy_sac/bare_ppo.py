"""Bare PyTorch + NumPy PPO on CartPole-v1 (a list of gymnasium envs, auto-reset), two uses:

``--mode cleanrl``: the "CleanRL-equivalent" contestant. CleanRL's ``ppo.py`` defaults (4 envs x 128
  steps, lr 2.5e-4 annealed linearly to 0 over total_timesteps 500k = 976 iterations, 4 epochs x 4
  minibatches, gamma 0.99, GAE lambda 0.95, clip 0.2 (also on the value loss), entropy 0.01, value
  coef 0.5, max grad norm 0.5, advantages normalised per minibatch, separate 64x64 tanh actor and
  critic with orthogonal init, Adam eps 1e-5, truncation treated as done). No CleanRL install; runs
  to the stop rule (evaluated every ``--eval-every`` env steps, CPU inside evaluations excluded).
``--mode floor --spec S``: Stride's framework-overhead floor. The same work as one Stride run: same
  number of envs, env steps per collect and collects (from its result.json), same model sizes (shared
  tanh encoder + one-hidden-layer actor/critic heads), epochs, minibatch size, return normalisation,
  advantage recomputation between epochs, value clipping, gradient clip and LR annealing (from its
  total_config.json). No evaluation; CPU of the whole loop after set-up.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from bench_common.evaluate import evaluate_batched
from bench_common.proc import cpu, emit, setup_process

CLEANRL = dict(n_envs=4, steps_per_env=128, gamma=0.99, lam=0.95, lr=2.5e-4, anneal_iters=500_000 // 512,
               epochs=4, minibatch_size=128, clip=0.2, vclip=0.2, ent=0.01, vf=0.5, max_grad_norm=0.5,
               norm_adv=True, value_norm=False, recompute_adv=False, shared_encoder=False,
               hidden=[64, 64], head_hidden=None, trunc_is_done=True, orthogonal=True)


def floor_settings(spec: dict) -> dict:
    n_envs = spec["collector_env_num"]
    per_collect = spec["env_step"] / max(1, spec["train_iter"])
    return dict(n_envs=n_envs, steps_per_env=max(1, int(round(per_collect / n_envs))), gamma=spec["discount_factor"],
                lam=spec["gae_lambda"], lr=spec["learning_rate"], anneal_iters=spec["lr_anneal_collects"] or 0,
                epochs=spec["epoch_per_collect"], minibatch_size=spec["batch_size"], clip=spec["clip_ratio"],
                vclip=spec["value_clip_ratio"], ent=spec["entropy_weight"], vf=spec["value_weight"],
                max_grad_norm=spec["grad_clip_norm"], norm_adv=spec["adv_norm"], value_norm=spec["value_norm"],
                recompute_adv=spec["recompute_adv"], shared_encoder=True, hidden=spec["encoder_hidden_size_list"],
                head_hidden=spec["head_hidden_size"], trunc_is_done=False, orthogonal=False)


def build(s: dict, obs_dim: int, n_act: int):
    from torch import nn

    def lin(i, o, std=np.sqrt(2)):
        layer = nn.Linear(i, o)
        if s["orthogonal"]:
            nn.init.orthogonal_(layer.weight, std)
            nn.init.constant_(layer.bias, 0.0)
        return layer

    def mlp(sizes):
        out = []
        for i, o in zip(sizes[:-1], sizes[1:]):
            out += [lin(i, o), nn.Tanh()]
        return out

    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            h = s["hidden"]
            if s["shared_encoder"]:
                self.enc = nn.Sequential(*mlp([obs_dim, *h]))
                hh = s["head_hidden"]
                self.actor = nn.Sequential(*mlp([h[-1], hh]), lin(hh, n_act, 0.01))
                self.critic = nn.Sequential(*mlp([h[-1], hh]), lin(hh, 1, 1.0))
            else:
                self.enc = nn.Identity()
                self.actor = nn.Sequential(*mlp([obs_dim, *h]), lin(h[-1], n_act, 0.01))
                self.critic = nn.Sequential(*mlp([obs_dim, *h]), lin(h[-1], 1, 1.0))

        def forward(self, x):
            z = self.enc(x)
            return self.actor(z), self.critic(z).squeeze(-1)

        def value(self, x):
            return self.critic(self.enc(x)).squeeze(-1)

    return Agent()


class RunningNorm:
    def __init__(self, enabled):
        self.enabled, self.mean, self.var, self.count = enabled, 0.0, 1.0, 1e-4

    def update(self, x):
        if self.enabled:
            n, m, v = x.numel(), x.mean().item(), x.var(unbiased=False).item()
            d, t = m - self.mean, self.count + n
            self.var = (self.var * self.count + v * n + d * d * self.count * n / t) / t
            self.mean, self.count = self.mean + d * n / t, t

    def norm(self, x):
        return (x - self.mean) / (self.var ** 0.5 + 1e-8) if self.enabled else x

    def denorm(self, x):
        return x * (self.var ** 0.5 + 1e-8) + self.mean if self.enabled else x


def gae(values, next_values, rewards, dones, ends, gamma, lam):
    """(T, N) tensors; dones: no bootstrap; ends: segment ends (done or truncation or rollout end)."""
    import torch

    T = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    last = torch.zeros_like(rewards[0])
    for t in reversed(range(T)):
        delta = rewards[t] + gamma * next_values[t] * (1 - dones[t]) - values[t]
        last = delta + gamma * lam * (1 - ends[t]) * last
        adv[t] = last
    return adv


def run(s: dict, seed: int, n_collects=None, eval_every=None, eval_episodes=100, eval_envs=8, stop_value=475.0,
        max_env_steps=500_000, confirm_episodes=0):
    import gymnasium as gym
    import torch
    from torch.distributions import Categorical

    torch.manual_seed(seed)
    N, T = s["n_envs"], s["steps_per_env"]
    envs = [gym.make("CartPole-v1") for _ in range(N)]
    obs = np.stack([e.reset(seed=seed + i)[0] for i, e in enumerate(envs)]).astype(np.float32)
    agent = build(s, 4, 2)
    opt = torch.optim.Adam(agent.parameters(), lr=s["lr"], eps=1e-5)
    rn = RunningNorm(s["value_norm"])
    B = N * T
    ob_buf = np.zeros((T, N, 4), np.float32)
    nob_buf = np.zeros((T, N, 4), np.float32)
    act_buf = np.zeros((T, N), np.int64)
    logp_buf = np.zeros((T, N), np.float32)
    rew_buf = np.zeros((T, N), np.float32)
    done_buf = np.zeros((T, N), np.float32)
    end_buf = np.zeros((T, N), np.float32)
    state = {"eval_cpu": 0.0, "history": [], "stop": False, "env_step": 0, "grad_steps": 0, "eval_return": None}
    t0 = cpu()
    it, last_eval = 0, 0
    while True:
        if n_collects is not None and it >= n_collects:
            break
        if n_collects is None and state["env_step"] >= max_env_steps:
            break
        if s["anneal_iters"]:
            for g in opt.param_groups:
                g["lr"] = s["lr"] * max(0.0, 1.0 - it / s["anneal_iters"])
        # ---- collect
        with torch.no_grad():
            for t in range(T):
                logits = agent.actor(agent.enc(torch.from_numpy(obs)))
                dist = Categorical(logits=logits)
                a = dist.sample()
                logp_buf[t] = dist.log_prob(a).numpy()
                a = a.numpy()
                ob_buf[t], act_buf[t] = obs, a
                for i, e in enumerate(envs):
                    o, r, term, trunc, _ = e.step(int(a[i]))
                    rew_buf[t, i] = r
                    nob_buf[t, i] = o
                    done_buf[t, i] = float(term or (trunc and s["trunc_is_done"]))
                    end_buf[t, i] = float(term or trunc)
                    if term or trunc:
                        o, _ = e.reset()
                    obs[i] = o
            end_buf[T - 1] = 1.0 if not s["trunc_is_done"] else end_buf[T - 1]
        state["env_step"] += B
        it += 1
        # ---- learn
        ob, nob = torch.from_numpy(ob_buf), torch.from_numpy(nob_buf)
        rew, dn = torch.from_numpy(rew_buf), torch.from_numpy(done_buf)
        if s["trunc_is_done"]:  # CleanRL: bootstrap only from the next rollout's first obs, ends = dones
            ends = dn.clone()
        else:
            ends = torch.from_numpy(end_buf)
        act, logp_old = torch.from_numpy(act_buf).reshape(B), torch.from_numpy(logp_buf).reshape(B)

        def values_adv():
            with torch.no_grad():
                v = rn.denorm(agent.value(torch.cat([ob, nob]).reshape(2 * B, 4))).reshape(2 * T, N)
            val, nval = v[:T], v[T:]
            if s["trunc_is_done"]:  # next value of step t = value of obs t+1 (CleanRL's recursion)
                nval = torch.cat([val[1:], nval[-1:]])
            adv = gae(val, nval, rew, dn, ends, s["gamma"], s["lam"])
            return val.reshape(B), adv.reshape(B)

        val, adv = values_adv()
        ret = val + adv
        rn.update(ret)
        obs_flat = ob.reshape(B, 4)
        for epoch in range(s["epochs"]):
            if epoch > 0 and s["recompute_adv"]:
                val, adv = values_adv()
                ret = val + adv
            v_old, ret_n = rn.norm(val), rn.norm(ret)
            for idx in torch.randperm(B).split(s["minibatch_size"]):
                logits, v = agent(obs_flat[idx])
                dist = Categorical(logits=logits)
                logp = dist.log_prob(act[idx])
                ratio = (logp - logp_old[idx]).exp()
                mb_adv = adv[idx]
                if s["norm_adv"] and len(idx) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - s["clip"], 1 + s["clip"])).mean()
                if s["vclip"] is not None:
                    vc = v_old[idx] + (v - v_old[idx]).clamp(-s["vclip"], s["vclip"])
                    vl = 0.5 * torch.max((v - ret_n[idx]) ** 2, (vc - ret_n[idx]) ** 2).mean()
                else:
                    vl = 0.5 * ((v - ret_n[idx]) ** 2).mean()
                loss = pg - s["ent"] * dist.entropy().mean() + s["vf"] * vl
                opt.zero_grad(set_to_none=True)
                loss.backward()
                if s["max_grad_norm"] is not None:
                    torch.nn.utils.clip_grad_norm_(agent.parameters(), s["max_grad_norm"])
                opt.step()
                state["grad_steps"] += 1
        # ---- evaluate (cleanrl mode)
        if eval_every and state["env_step"] - last_eval >= eval_every:
            last_eval = state["env_step"] - state["env_step"] % eval_every
            c0 = cpu()

            def act_fn(batch):
                with torch.no_grad():
                    return agent.actor(agent.enc(torch.from_numpy(batch))).argmax(-1).numpy()

            mean = float(np.mean(evaluate_batched(act_fn, eval_episodes, eval_envs, 10_000 + seed)))
            if mean >= stop_value and confirm_episodes:  # a passing screen must hold on further episodes
                confirmed = float(np.mean(evaluate_batched(act_fn, confirm_episodes, eval_envs, 20_000 + seed)))
                state["history"].append((state["env_step"], round(mean, 1), round(confirmed, 1)))
                mean = min(mean, confirmed)
            else:
                state["history"].append((state["env_step"], round(mean, 1)))
            state["eval_cpu"] += cpu() - c0
            state["eval_return"] = mean
            if mean >= stop_value:
                state["stop"] = True
                break
    state["train_cpu_seconds"] = cpu() - t0 - state["eval_cpu"]
    state["iterations"] = it
    state["n_params"] = int(sum(p.numel() for p in agent.parameters()))
    return state


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["cleanrl", "floor"], required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--spec", help="floor: JSON spec from Stride's run (bench.py writes it)")
    ap.add_argument("--max-env-steps", type=int, default=500_000)
    ap.add_argument("--eval-every", type=int, default=2560)
    ap.add_argument("--eval-episodes", type=int, default=100)
    ap.add_argument("--eval-envs", type=int, default=8)
    ap.add_argument("--stop-value", type=float, default=475.0)
    ap.add_argument("--confirm-episodes", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)
    if args.mode == "cleanrl":
        s = dict(CLEANRL)
        st = run(s, args.seed, eval_every=args.eval_every, eval_episodes=args.eval_episodes, eval_envs=args.eval_envs,
                 stop_value=args.stop_value, max_env_steps=args.max_env_steps, confirm_episodes=args.confirm_episodes)
        emit({"contestant": "cleanrl", "algo": "ppo", "seed": args.seed, "settings": s, "stop": st["stop"],
              "env_step": st["env_step"], "train_iter": st["grad_steps"], "iterations": st["iterations"],
              "eval_return": st["eval_return"], "train_cpu_seconds": st["train_cpu_seconds"],
              "eval_cpu_seconds": st["eval_cpu"], "eval_history": st["history"], "n_params": st["n_params"], **info},
             args.out)
    else:
        with open(args.spec) as f:
            spec = json.load(f)
        s = floor_settings(spec)
        st = run(s, args.seed, n_collects=spec["train_iter"])
        emit({"contestant": "floor", "algo": "ppo", "seed": args.seed, "spec": spec, "settings": s,
              "cpu_seconds": st["train_cpu_seconds"], "env_step_done": st["env_step"],
              "train_iter_done": st["iterations"], "grad_steps_done": st["grad_steps"], "n_params": st["n_params"],
              **info}, args.out)


if __name__ == "__main__":
    main()
