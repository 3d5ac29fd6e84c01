"""Does Stride's SAC update do what Tianshou's does? Both learners from the same weights, fed the same
batches, compared parameter by parameter after each update (issue 32: Tianshou's Hopper SAC learns
faster than Stride's on the same env, so the update is the first suspect).

    PYTHONPATH=benchmarks benchmarks/.venv-peers/bin/python benchmarks/curves/sac_update_vs_tianshou.py

Stride: ``hopper_sac_config`` as shipped (its learn mode, public API only). Tianshou: its
``mujoco_sac.py`` learner as ``tianshou_curve.py`` builds it. Both draw their two batches of Gaussian
noise per update (the next actions', then the current actions') from torch's global generator in the same
order and the same way (``randn_like`` and ``Normal.rsample`` give the same numbers), so seeding it before
each learner's update gives both the same actions. ``--mean-scale`` multiplies the mean head's initial
weights (10: some actions saturate, where Tianshou's ``log(1 - tanh(u)^2 + eps)`` and Stride's exact
correction part). The target critics start as the online ones plus noise, so the TD targets use them. Each
update takes a fresh batch of 256 random transitions (10 % terminal).
Adam's first steps move a weight by about ``lr * sign(gradient)`` whatever the gradient's size, so a weight
whose gradient is near zero can move either way from float rounding: the report gives, per tensor, the
largest difference and the share of weights that differ by more than 1e-4 (a tenth of a step).
"""

from __future__ import annotations

import argparse
import copy
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tianshou_curve import build  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--updates", type=int, default=5)
    ap.add_argument("--mean-scale", type=float, default=1.0, help="the mean head's initial weights times this")
    args = ap.parse_args()

    import gymnasium as gym
    import torch
    from tianshou.data import Batch, ReplayBuffer
    from tianshou.utils.torch_utils import policy_within_training_step

    from stride.config import compile_config
    from stride.policy import SACPolicy
    from stride.zoo.mujoco.config.hopper_sac_config import create_config, main_config

    torch.set_num_threads(1)
    torch.manual_seed(0)
    space = gym.spaces.Box(-1, 1, (3,), np.float32)
    stride = SACPolicy(compile_config(copy.deepcopy(main_config), create_cfg=create_config, save_cfg=False,
                                      action_space=space).policy)
    tianshou, _ = build("sac", gym.make("Hopper-v5"))
    # the shared starting point: Stride's initial weights (the mean head scaled), perturbed targets
    sd = stride.learn_mode.state_dict()
    sd["model"]["actor.head.weight"][:3] *= args.mean_scale
    noise = torch.Generator().manual_seed(5)
    sd["target_critic"] = {k: sd["model"]["critic." + k] + 0.01 * torch.randn(v.shape, generator=noise)
                           for k, v in sd["target_critic"].items()}
    stride.learn_mode.load_state_dict(sd)
    sd = stride.learn_mode.state_dict()

    def mlp(prefix: str, src: dict) -> dict:
        return {f"model.model.{i}.{p}": src[f"{prefix}{i}.{p}"] for i in (0, 2) for p in ("weight", "bias")}

    def linear(w: torch.Tensor, b: torch.Tensor) -> dict:
        return {"model.0.weight": w, "model.0.bias": b}

    model, actor = sd["model"], tianshou.policy.actor
    actor.preprocess.load_state_dict(mlp("actor.body.", model))
    actor.mu.load_state_dict(linear(model["actor.head.weight"][:3], model["actor.head.bias"][:3]))
    actor.sigma.load_state_dict(linear(model["actor.head.weight"][3:], model["actor.head.bias"][3:]))
    pairs = ((tianshou.critic, tianshou.critic_old), (tianshou.critic2, tianshou.critic2_old))
    for i, (online, target) in enumerate(pairs):
        for net, src, pre in ((online, model, "critic."), (getattr(target, "module", target), sd["target_critic"], "")):
            net.preprocess.load_state_dict(mlp(f"{pre}nets.{i}.0.", src))
            net.last.load_state_dict(linear(src[f"{pre}nets.{i}.1.weight"], src[f"{pre}nets.{i}.1.bias"]))

    def tensors(policy: SACPolicy) -> list:
        s = policy.learn_mode.state_dict()
        return [s["model"]["actor.body.0.weight"], s["model"]["actor.head.weight"][:3], s["model"]["critic.nets.0.0.0.weight"],
                s["model"]["critic.nets.1.1.weight"], s["target_critic"]["nets.0.0.0.weight"]]

    names = ("actor layer 1", "actor mean head", "critic 1 layer 1", "critic 2 output", "target critic 1 layer 1")

    def report(tag: str) -> float:
        theirs = [actor.preprocess.model.model[0].weight, actor.mu.model[0].weight,
                  tianshou.critic.preprocess.model.model[0].weight, tianshou.critic2.last.model[0].weight,
                  getattr(tianshou.critic_old, "module", tianshou.critic_old).preprocess.model.model[0].weight]
        worst, cells = 0.0, []
        for name, a, b in zip(names, tensors(stride), theirs):
            d = (a - b.detach()).abs()
            share = float((d > 1e-4).float().mean())
            worst = max(worst, share)
            cells.append(f"{name}: max {float(d.max()):.1e}, >1e-4 {share:.2%}")
        print(f"{tag:<9} " + "; ".join(cells))
        return worst

    report("start")
    rng, n = np.random.default_rng(0), 256
    worst = 0.0
    for k in range(args.updates):
        obs, nxt = (rng.standard_normal((n, 11)).astype(np.float32) for _ in range(2))
        act = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
        rew, term = rng.standard_normal(n).astype(np.float32), rng.random(n) < 0.1
        torch.manual_seed(1000 + k)
        stride.learn_mode.forward({"obs": obs, "action": act, "reward": rew, "next_obs": nxt, "done": term})
        buf = ReplayBuffer(n)
        for j in range(n):
            buf.add(Batch(obs=obs[j], act=act[j], rew=float(rew[j]), terminated=bool(term[j]), truncated=False,
                          obs_next=nxt[j], info={}))
        torch.manual_seed(1000 + k)
        with policy_within_training_step(tianshou.policy):
            tianshou.update(buffer=buf, sample_size=0)  # 0: the whole buffer, in order
        worst = max(worst, report(f"update {k + 1}"))
    print(f"largest share of weights apart from Tianshou's by > 1e-4: {worst:.2%}")


if __name__ == "__main__":
    main()
