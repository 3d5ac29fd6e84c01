"""`imitation`'s GAIL (HumanCompatibleAI, 1.0.1) on CartPole-v1: the peer run of
``cartpole_gail_vs_imitation.py``, on Stride's expert demonstrations and under Stride's evaluation rule.

    PYTHONPATH=benchmarks nice -n 5 benchmarks/.venv-imitation/bin/python benchmarks/gail/imitation_gail.py \
        --demo demo.npz --env-step 200000 --seed 0 --stop-value 450 --out DIR

Setting: imitation's GAIL tutorial (docs/tutorials/3_train_gail.ipynb, imitation master): 8 envs,
SB3 ``PPO`` generator with ``batch_size=64, ent_coef=0.0, learning_rate=4e-4, gamma=0.95, n_epochs=5``
(``n_steps`` SB3's default 2048, so one GAIL round = 8 x 2048 = 16,384 env steps), ``BasicRewardNet``
with ``RunningNorm`` input normalisation, ``demo_batch_size=1024, gen_replay_buffer_capacity=512,
n_disc_updates_per_round=8``. Two departures, both forced by running on Stride's data: the env is
Gymnasium's ``CartPole-v1`` (the tutorial's ``seals/CartPole-v0`` has a fixed horizon; CartPole-v1
is the env Stride's demonstrations were recorded on), so ``allow_variable_horizon=True``; and the
demonstrations are Stride's (``export_demo.py``), turned into ``imitation.data.types.Trajectory``
objects without rewards. The generator's env reward is replaced by the discriminator's
(``RewardVecEnvWrapper`` inside ``GAIL``); the env's reward is used only by the evaluations.

``--generator dqn`` (a diagnostic, not imitation's documented setting): SB3 ``DQN`` in the setting of
Stride's ``cartpole_dqn_gail`` as far as SB3 and imitation allow -- 8 envs, 128x128 Q-net, Adam 3e-3,
batch 64, gamma 0.97, replay 20,000, no warm-up, 4 gradient steps per 8 env steps, target copy every
~25 gradient steps, eps 0.1 + 0.85 exp(-env_step / 10,000), no gradient clipping -- and a discriminator
like Stride's: 64x64 ``BasicRewardNet`` (obs, action) with ``RunningNorm``, Adam 1e-3, 125 steps on
64 expert + 64 agent rows per 1,000-env-step round (Stride: one such step per 8 env steps), agent window
10,000. Differences left: SB3's DQN has a Huber loss and no double-Q target (Stride: MSE, double Q);
imitation writes the discriminator's reward into the replay buffer when a transition is collected,
Stride recomputes it for every sampled batch with the current discriminator.

Loop: ``GAIL.train``'s round -- ``train_gen()``, ``n_disc_updates_per_round`` x ``train_disc()`` in
``networks.training(reward_train)``, ``logger.dump`` -- written out with the public methods so a
confirmed evaluation can stop it (``train`` has no early stop). Rule (Stride's evaluator's): after every
round (the only points where the policy changes) a 10-episode deterministic screen on 8 envs; a
screen at ``--stop-value`` is confirmed on 100 further episodes, and a confirmed one stops the run.
Afterwards 100 fresh episodes of the final policy. Train CPU seconds: ``time.process_time()`` from the
first round to the end, minus the CPU spent inside evaluations. ``torch.set_num_threads(1)``.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import time
from typing import Any, Dict, List, Optional

import numpy as np
import torch
from imitation.algorithms.adversarial.gail import GAIL
from imitation.data import types
from imitation.rewards.reward_nets import BasicRewardNet
from imitation.util import logger as imit_logger
from imitation.util import networks
from imitation.util.util import make_vec_env
from stable_baselines3 import DQN, PPO
from stable_baselines3.ppo import MlpPolicy

from bench_common.evaluate import evaluate_batched

EVAL_ENVS = 8  # Stride's cartpole_dqn_gail: evaluator_env_num
SCREEN, CONFIRM, FRESH = 10, 100, 100


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def load_trajectories(path: str) -> List[types.Trajectory]:
    """The ``.npz`` of ``export_demo.py`` as imitation's trajectories (obs: T + 1 rows, acts: T, no rewards)."""
    d = np.load(path)
    out: List[types.Trajectory] = []
    start = 0
    for n in d["lengths"].tolist():
        end = start + n
        obs = np.concatenate([d["obs"][start:end], d["next_obs"][end - 1:end]]).astype(np.float32)
        out.append(types.Trajectory(obs=obs, acts=d["action"][start:end].astype(np.int64), infos=None,
                                    terminal=bool(d["terminated"][end - 1])))
        start = end
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--demo", required=True, help=".npz written by export_demo.py")
    ap.add_argument("--env-step", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stop-value", type=float, required=True)
    ap.add_argument("--out", required=True, help="folder for imitation's csv log")
    ap.add_argument("--generator", choices=("ppo", "dqn"), default="ppo",
                    help="ppo: the tutorial's setting; dqn: SB3 DQN in Stride's cartpole_dqn_gail setting (a diagnostic)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    uptime0, wall0 = _uptime(), time.perf_counter()
    demos = load_trajectories(args.demo)
    env_id = str(np.load(args.demo)["env_id"]) or "CartPole-v1"

    venv = make_vec_env(env_id, rng=np.random.default_rng(args.seed), n_envs=8)
    os.makedirs(args.out, exist_ok=True)
    log = imit_logger.configure(args.out, ["csv"])
    if args.generator == "ppo":  # the tutorial's setting
        learner: Any = PPO(env=venv, policy=MlpPolicy, batch_size=64, ent_coef=0.0, learning_rate=0.0004, gamma=0.95,
                           n_epochs=5, seed=args.seed, device="cpu")
        reward_net = BasicRewardNet(observation_space=venv.observation_space, action_space=venv.action_space,
                                    normalize_input_layer=networks.RunningNorm)
        trainer = GAIL(demonstrations=demos, demo_batch_size=1024, gen_replay_buffer_capacity=512,
                       n_disc_updates_per_round=8, venv=venv, gen_algo=learner, reward_net=reward_net,
                       allow_variable_horizon=True, custom_logger=log)
    else:  # Stride's cartpole_dqn_gail setting, as far as SB3's DQN and imitation's GAIL allow
        learner = DQN("MlpPolicy", venv, learning_rate=3e-3, buffer_size=20_000, learning_starts=0, batch_size=64,
                      gamma=0.97, train_freq=1, gradient_steps=4, target_update_interval=50,
                      max_grad_norm=float("inf"), policy_kwargs=dict(net_arch=[128, 128]), seed=args.seed,
                      device="cpu")
        # Stride's eps: 0.1 + 0.85 exp(-env_step / 10,000) on the absolute env-step clock (SB3's linear schedule
        # runs on the progress of each learn() call, which GAIL restarts every round)
        learner.exploration_schedule = lambda _: 0.1 + 0.85 * math.exp(-learner.num_timesteps / 10_000)
        reward_net = BasicRewardNet(observation_space=venv.observation_space, action_space=venv.action_space,
                                    hid_sizes=(64, 64), normalize_input_layer=networks.RunningNorm)
        trainer = GAIL(demonstrations=demos, demo_batch_size=64, gen_replay_buffer_capacity=10_000,
                       n_disc_updates_per_round=125, gen_train_timesteps=1000, venv=venv, gen_algo=learner,
                       reward_net=reward_net, disc_opt_kwargs=dict(lr=1e-3), allow_variable_horizon=True,
                       custom_logger=log)

    def act(obs: np.ndarray) -> np.ndarray:
        return learner.predict(obs, deterministic=True)[0]

    evals = 0  # evaluations so far: each gets its own env seeds

    def returns(n: int) -> float:
        nonlocal evals
        mean = float(np.mean(evaluate_batched(act, n, EVAL_ENVS, args.seed + 10_000 + 1_000_000 * evals, env_id)))
        evals += 1
        return mean

    n_rounds = args.env_step // trainer.gen_train_timesteps
    if n_rounds < 1:
        raise SystemExit(f"--env-step {args.env_step} is less than one GAIL round ({trainer.gen_train_timesteps} env steps)")
    eval_cpu = 0.0
    curve: List[Dict[str, Any]] = []
    stopped_at: Optional[int] = None
    cpu0 = time.process_time()
    for _ in range(n_rounds):
        trainer.train_gen()
        for _ in range(trainer.n_disc_updates_per_round):
            with networks.training(trainer.reward_train):
                trainer.train_disc()
        trainer.logger.dump(learner.num_timesteps)
        c = time.process_time()
        screen = returns(SCREEN)
        confirm = returns(CONFIRM) if screen >= args.stop_value else None
        eval_cpu += time.process_time() - c
        curve.append({"envstep": int(learner.num_timesteps), "screen": round(screen, 1),
                      "confirm": None if confirm is None else round(confirm, 1),
                      "train_cpu_seconds": round(time.process_time() - cpu0 - eval_cpu, 2)})
        if confirm is not None and confirm >= args.stop_value:
            stopped_at = int(learner.num_timesteps)
            break
    train_cpu = time.process_time() - cpu0 - eval_cpu
    final = evaluate_batched(act, FRESH, EVAL_ENVS, args.seed + 20_000_000, env_id)
    print(json.dumps({"contestant": f"imitation GAIL + SB3 {args.generator.upper()}", "seed": args.seed, "env_id": env_id,
                      "env_step": int(learner.num_timesteps), "stop_confirmed": stopped_at is not None,
                      "confirm_mean": next((p["confirm"] for p in curve if p["envstep"] == stopped_at), None),
                      "final_mean_100": round(float(np.mean(final)), 1),
                      "train_cpu_seconds": round(train_cpu, 1), "eval_cpu_seconds": round(eval_cpu, 1),
                      "wall_seconds": round(time.perf_counter() - wall0, 1), "curve": curve,
                      "uptime_start": uptime0, "uptime_end": _uptime()}))


if __name__ == "__main__":
    main()
