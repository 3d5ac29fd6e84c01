"""SB3 contestant of the fixed-budget curves: one case, one seed, trained to the budget with an
evaluation every ``--eval-every`` env steps, then the final policy on ``--final-episodes`` fresh episodes.
Run as ``python benchmarks/curves/sb3_curve.py --case breakout_dqn|breakout_ppo|hopper_sac|... ...``.

Hyper-parameters: rl-zoo3's where it has the env (MuJoCo: ``sac.yml`` / ``td3.yml`` <env>-v4, on -v5), else
Stride's zoo config translated key by key (MinAtar: rl-zoo3 has no entry), network included (the MinAtar
conv net below). Curve points carry train CPU s (process CPU minus the CPU of every evaluation) and wall s.
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
from bench_common.rlzoo import linear, preprocess, rl_zoo3_hyperparams  # noqa: E402


def minatar_extractor():
    """SB3 features extractor = Stride's MinAtar encoder: conv 16 3x3 s1, ReLU, flatten, FC 128, ReLU."""
    import torch.nn as nn
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class MinAtarCNN(BaseFeaturesExtractor):
        def __init__(self, observation_space, features_dim: int = 128) -> None:
            super().__init__(observation_space, features_dim)
            c, h, w = observation_space.shape
            self.net = nn.Sequential(nn.Conv2d(c, 16, 3, stride=1), nn.ReLU(), nn.Flatten(),
                                     nn.Linear(16 * (h - 2) * (w - 2), features_dim), nn.ReLU())

        def forward(self, obs):
            return self.net(obs.float())

    return MinAtarCNN


def build(case: str, budget: int, seed: int):
    """``(model, hyper-parameter record)`` for a case."""
    from stable_baselines3 import DQN, PPO, SAC, TD3
    from stable_baselines3.common.env_util import make_vec_env

    c = CASES[case]
    if "zoo_env" in c:  # MuJoCo: rl-zoo3's entry for the env
        zoo = rl_zoo3_hyperparams(c["algo"], c["zoo_env"])
        hp, n_envs, n_timesteps = preprocess(zoo["raw"], budget)
        policy = hp.pop("policy")
        env = make_vec_env(c["env_id"], n_envs=n_envs, seed=seed)
        if "noise_type" in hp:  # rl-zoo3's exploration-noise keys (TD3) -> SB3's action_noise, as its ExpManager does
            from stable_baselines3.common.noise import NormalActionNoise

            kind, std, n = hp.pop("noise_type"), float(hp.pop("noise_std")), env.action_space.shape[0]
            if kind != "normal":
                raise SystemExit(f"rl-zoo3 noise_type '{kind}' is not reproduced here; only 'normal'")
            hp["action_noise"] = NormalActionNoise(np.zeros(n), std * np.ones(n))
        record = {"source": f"rl-zoo3 {zoo['path']} [{c['zoo_env']}]", "n_envs": n_envs, "n_timesteps": n_timesteps,
                  **{k: str(v) for k, v in zoo["raw"].items()}}
        return {"sac": SAC, "td3": TD3}[c["algo"]](policy, env, seed=seed, verbose=0, device="cpu", **hp), record
    kw = dict(features_extractor_class=minatar_extractor(), features_extractor_kwargs=dict(features_dim=128),
              normalize_images=False, net_arch=[])
    if c["algo"] == "dqn":
        # Stride's minatar_{breakout,spaceinvaders}_dqn_config: 4 envs, one update per frame, Adam 2.5e-4, batch 32, replay 100k,
        # 5k random steps, target copy every 1,000 frames, eps 1 -> 0.1 over 100k frames, Huber, no grad clip
        env = make_vec_env(c["env_id"], n_envs=4, seed=seed)
        hp = dict(learning_rate=2.5e-4, batch_size=32, buffer_size=100_000, learning_starts=5_000,
                  target_update_interval=1_000, train_freq=1, gradient_steps=4, gamma=0.99,
                  exploration_initial_eps=1.0, exploration_final_eps=0.1,
                  exploration_fraction=min(1.0, 100_000 / budget), max_grad_norm=float("inf"), policy_kwargs=kw)
        model = DQN("CnnPolicy", env, seed=seed, verbose=0, device="cpu", **hp)
    else:
        # Stride's minatar_breakout_ppo_config: 8 envs x 32 steps, 4 epochs, minibatch 64,
        # lr 1e-3 annealed to 0 over 2M env steps (absolute, as Stride's lr_anneal_collects=7812), clip 0.1 (policy
        # and value), entropy 0.01, value 0.5, grad norm 0.5, shared encoder with linear actor / critic heads
        env = make_vec_env(c["env_id"], n_envs=8, seed=seed)
        hp = dict(n_steps=32, batch_size=64, n_epochs=4, learning_rate=linear(1e-3, 2_000_000, budget),
                  gamma=0.99, gae_lambda=0.95, clip_range=0.1, clip_range_vf=0.1, ent_coef=0.01, vf_coef=0.5,
                  max_grad_norm=0.5, normalize_advantage=True, policy_kwargs=kw)
        model = PPO("CnnPolicy", env, seed=seed, verbose=0, device="cpu", **hp)
    record = {"source": f"Stride's {c['config']} translated", **{k: str(v) for k, v in hp.items()}}
    return model, record


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", choices=sorted(CASES), required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=int, required=True, help="env steps")
    ap.add_argument("--eval-every", type=int, required=True)
    ap.add_argument("--eval-episodes", type=int, default=10)
    ap.add_argument("--final-episodes", type=int, default=100)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)

    import stable_baselines3
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    env_id = CASES[args.case]["env_id"]
    model, hp = build(args.case, args.budget, args.seed)
    state = {"next": 0}

    def act(batch: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model.predict(batch, deterministic=True)[0]

    rec = CurveRecorder("sb3", args.case, args.seed, args.budget, env_id, args.eval_episodes, act, args.out)
    evaluate = rec.evaluate

    class Curve(BaseCallback):
        def _on_step(self) -> bool:
            if self.num_timesteps >= state["next"]:
                evaluate(self.num_timesteps)
                state["next"] += args.eval_every
            return True

    model.learn(total_timesteps=args.budget, callback=Curve())
    train_cpu = rec.train_cpu()
    final = rec.final(args.final_episodes)
    emit({"contestant": "sb3", "case": args.case, "seed": args.seed, "budget": args.budget,
          "env_step": int(model.num_timesteps), "curve": rec.curve, "train_cpu_seconds": train_cpu,
          "eval_cpu_seconds": rec.eval_cpu, "wall_seconds": rec.wall(),
          "final_returns": final, "hyperparams": hp, "sb3_version": stable_baselines3.__version__,
          "n_params": int(sum(p.numel() for p in model.policy.parameters())), **info}, args.out)
    rec.done()


if __name__ == "__main__":
    main()
