"""SB3 contestant: stable-baselines3 ``PPO`` on CartPole-v1 or ``SAC`` on Pendulum-v1 with rl-zoo3's
tuned hyper-parameters, read at run time from the installed rl_zoo3 package's ``hyperparams/ppo.yml``
/ ``sac.yml`` and preprocessed the way rl-zoo3's ExpManager does (``n_envs`` default 1,
``policy_kwargs`` eval'd, ``lin_<x>`` strings -> linear schedules, ``n_timesteps`` removed).

Linear schedules: SB3 anneals over ``total_timesteps``; rl-zoo3 trains for ``n_timesteps``. We pass the
step cap as ``total_timesteps`` and rescale each ``lin_`` schedule so it keeps rl-zoo3's *absolute*
schedule (reaches 0 after ``n_timesteps`` env steps, then stays at 0).

Stop rule (identical to Stride's): every ``--eval-every`` env steps, a ``--eval-episodes``-episode
deterministic evaluation on ``--eval-envs`` separate envs; stop when the mean is >= ``--stop-value``.
Train CPU s = process CPU from the start of ``learn()`` to the passing evaluation minus the CPU inside
evaluations.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from typing import Callable, List

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "dqn"))
from common import cpu, emit, evaluate_batched, setup_process  # noqa: E402

ENV = {"ppo": "CartPole-v1", "sac": "Pendulum-v1"}


def rl_zoo3_hyperparams(algo: str, env_id: str) -> dict:
    import yaml

    spec = importlib.util.find_spec("rl_zoo3")  # does not import it (it needs huggingface_hub)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("rl_zoo3 is not installed in this venv (pip install --no-deps rl_zoo3)")
    path = os.path.join(list(spec.submodule_search_locations)[0], "hyperparams", f"{algo}.yml")
    with open(path) as f:
        all_params = yaml.safe_load(f)
    return {"path": path, "raw": dict(all_params[env_id])}


def linear(init: float, n_timesteps: int, total: int) -> Callable[[float], float]:
    """rl-zoo3's ``lin_<init>`` on an absolute clock: init * (1 - env_steps / n_timesteps), floored at 0.
    SB3 calls it with progress_remaining = 1 - env_steps / total."""
    return lambda progress_remaining: init * max(0.0, 1.0 - (1.0 - progress_remaining) * total / n_timesteps)


def preprocess(raw: dict, total: int) -> tuple:
    hp = dict(raw)
    n_envs = int(hp.pop("n_envs", 1))
    n_timesteps = int(float(hp.pop("n_timesteps")))
    for unsupported in ("normalize", "frame_stack", "env_wrapper", "vec_env_wrapper", "callback"):
        if unsupported in hp:
            raise SystemExit(f"rl-zoo3 entry uses '{unsupported}', which this benchmark does not reproduce")
    for key in ("policy_kwargs", "replay_buffer_kwargs"):
        if isinstance(hp.get(key), str):
            hp[key] = eval(hp[key])  # rl-zoo3 does the same
    for key in ("learning_rate", "clip_range", "clip_range_vf"):
        v = hp.get(key)
        if isinstance(v, str):
            if not v.startswith("lin_"):
                raise SystemExit(f"unsupported schedule {key}={v!r}")
            hp[key] = linear(float(v.split("_")[1]), n_timesteps, total)
    if isinstance(hp.get("train_freq"), list):
        hp["train_freq"] = tuple(hp["train_freq"])
    return hp, n_envs, n_timesteps


def evaluate_continuous(act_fn, n_episodes: int, n_envs: int, seed: int, env_id: str) -> List[float]:
    """Continuous-action twin of common.evaluate_batched (same episode split and seeding)."""
    import gymnasium as gym

    envs = [gym.make(env_id) for _ in range(n_envs)]
    quota = [n_episodes // n_envs + (1 if i < n_episodes % n_envs else 0) for i in range(n_envs)]
    obs = [envs[i].reset(seed=seed + 1000 * i)[0] for i in range(n_envs)]
    ret = [0.0] * n_envs
    returns: List[float] = []
    active = [i for i in range(n_envs) if quota[i] > 0]
    while active:
        actions = act_fn(np.asarray([obs[i] for i in active], dtype=np.float32))
        still = []
        for i, a in zip(active, actions):
            o, r, term, trunc, _ = envs[i].step(np.asarray(a, dtype=np.float32))
            ret[i] += float(r)
            if term or trunc:
                returns.append(ret[i])
                ret[i] = 0.0
                quota[i] -= 1
                if quota[i] > 0:
                    o, _ = envs[i].reset()
                    still.append(i)
            else:
                still.append(i)
            obs[i] = o
        active = still
    for e in envs:
        e.close()
    return returns


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--algo", choices=sorted(ENV), required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-env-steps", type=int, default=200_000)
    ap.add_argument("--eval-every", type=int, default=2560)
    ap.add_argument("--eval-episodes", type=int, default=100)
    ap.add_argument("--eval-envs", type=int, default=8)
    ap.add_argument("--stop-value", type=float, required=True)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)

    import stable_baselines3
    import torch
    from stable_baselines3 import PPO, SAC
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    env_id = ENV[args.algo]
    zoo = rl_zoo3_hyperparams(args.algo, env_id)
    total = args.max_env_steps
    hp, n_envs, n_timesteps = preprocess(zoo["raw"], total)
    policy = hp.pop("policy")
    evaluate = (lambda f: evaluate_batched(f, args.eval_episodes, args.eval_envs, 10_000 + args.seed, env_id)) \
        if args.algo == "ppo" else \
        (lambda f: evaluate_continuous(f, args.eval_episodes, args.eval_envs, 10_000 + args.seed, env_id))

    state = {"eval_cpu": 0.0, "evals": 0, "stop": False, "env_step": None, "eval_return": None,
             "last_eval": 0, "history": []}

    class StopOnEval(BaseCallback):
        def _on_step(self) -> bool:
            n = self.num_timesteps
            if n - state["last_eval"] < args.eval_every:
                return True
            state["last_eval"] = n - n % args.eval_every
            c0 = cpu()

            def act(batch):
                with torch.no_grad():
                    a, _ = self.model.predict(batch, deterministic=True)
                return a

            rets = evaluate(act)
            state["eval_cpu"] += cpu() - c0
            state["evals"] += 1
            mean = float(np.mean(rets))
            state["history"].append((n, round(mean, 1)))
            if mean >= args.stop_value:
                state.update(stop=True, env_step=n, eval_return=mean, stop_cpu=cpu())
                return False
            return True

    env = make_vec_env(env_id, n_envs=n_envs, seed=args.seed)
    cls = PPO if args.algo == "ppo" else SAC
    model = cls(policy, env, seed=args.seed, verbose=0, device="cpu", **hp)
    t0 = cpu()  # components built, training loop about to start (where Stride's clock starts)
    model.learn(total_timesteps=total, callback=StopOnEval())
    t_end = state.get("stop_cpu", cpu())
    res = {
        "contestant": "sb3", "algo": args.algo, "seed": args.seed, "stop": state["stop"],
        "env_step": state["env_step"] if state["stop"] else int(model.num_timesteps),
        "train_iter": int(model._n_updates),  # PPO: minibatch gradient steps; SAC: gradient steps
        "eval_return": state["eval_return"] if state["stop"] else (state["history"][-1][1] if state["history"] else None),
        "train_cpu_seconds": t_end - t0 - state["eval_cpu"], "eval_cpu_seconds": state["eval_cpu"],
        "n_evals": state["evals"], "eval_history": state["history"], "hyperparams_file": zoo["path"],
        "hyperparams_raw": {k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in zoo["raw"].items()},
        "n_envs": n_envs, "n_timesteps": n_timesteps,
        "n_params": int(sum(p.numel() for p in model.policy.parameters())),
        "sb3_version": stable_baselines3.__version__, **info,
    }
    emit(res, args.out)


if __name__ == "__main__":
    main()
