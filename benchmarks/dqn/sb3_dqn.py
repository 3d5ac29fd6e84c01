"""SB3 contestant: stable-baselines3 ``DQN`` on CartPole-v1 with rl-zoo3's tuned hyper-parameters.

The hyper-parameters are read at run time from the installed rl_zoo3 package's
``hyperparams/dqn.yml`` (CartPole-v1 entry), preprocessed the way rl-zoo3's ExpManager does
(``n_envs`` default 1, schedules, ``policy_kwargs`` eval'd, ``n_timesteps`` removed).

Stop criterion (identical to Stride's): every ``--eval-every`` env steps, a ``--eval-episodes``
episode evaluation with deterministic actions on separate envs; stop when the mean return is
>= ``--stop-value``. Train CPU seconds = process CPU time from the start of ``learn()`` (model and envs
built, as Stride's clock starts after its components are built) to the passing evaluation, minus the CPU time spent inside the evaluations (measured around each evaluation).

Exploration: SB3 anneals eps over ``exploration_fraction * total_timesteps``. rl-zoo3 trains
for ``n_timesteps``; we pass the step cap as ``total_timesteps``, so ``exploration_fraction`` is
rescaled to keep rl-zoo3's absolute schedule (eps reaches its final value after
``exploration_fraction * n_timesteps`` env steps).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import EVAL_EPISODES, STOP_VALUE, cpu, emit, evaluate_batched, setup_process  # noqa: E402


def rl_zoo3_hyperparams(env_id: str = "CartPole-v1") -> dict:
    import yaml

    spec = importlib.util.find_spec("rl_zoo3")  # does not import it (it needs huggingface_hub)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("rl_zoo3 is not installed in this venv (pip install --no-deps rl_zoo3)")
    path = os.path.join(list(spec.submodule_search_locations)[0], "hyperparams", "dqn.yml")
    with open(path) as f:
        all_params = yaml.safe_load(f)
    params = dict(all_params[env_id])
    return {"path": path, "raw": params}


def preprocess(raw: dict) -> tuple:
    """rl-zoo3's ExpManager._preprocess_hyperparams, the parts a DQN/CartPole entry can use."""
    from stable_baselines3.common.utils import ConstantSchedule  # noqa: F401 (exists in SB3 2.x)

    hp = dict(raw)
    n_envs = int(hp.pop("n_envs", 1))
    n_timesteps = int(float(hp.pop("n_timesteps")))
    for unsupported in ("normalize", "frame_stack", "env_wrapper", "vec_env_wrapper", "callback"):
        if unsupported in hp:
            raise SystemExit(f"rl-zoo3 entry uses '{unsupported}', which this benchmark does not reproduce")
    for key in ("policy_kwargs", "replay_buffer_kwargs"):
        if isinstance(hp.get(key), str):
            hp[key] = eval(hp[key])  # rl-zoo3 does the same
    lr = hp.get("learning_rate")
    if isinstance(lr, str):  # "lin_0.001"
        init = float(lr.split("_")[1])
        hp["learning_rate"] = lambda progress_remaining, init=init: progress_remaining * init
    if isinstance(hp.get("train_freq"), list):
        hp["train_freq"] = tuple(hp["train_freq"])
    return hp, n_envs, n_timesteps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-env-steps", type=int, default=100_000)
    ap.add_argument("--eval-every", type=int, default=1000)
    ap.add_argument("--eval-episodes", type=int, default=EVAL_EPISODES)
    ap.add_argument("--eval-envs", type=int, default=10)
    ap.add_argument("--stop-value", type=float, default=STOP_VALUE)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)

    import numpy as np
    import stable_baselines3
    import torch
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env

    zoo = rl_zoo3_hyperparams()
    hp, n_envs, n_timesteps = preprocess(zoo["raw"])
    policy = hp.pop("policy")
    total = args.max_env_steps
    if "exploration_fraction" in hp:
        hp["exploration_fraction"] = min(1.0, hp["exploration_fraction"] * n_timesteps / total)

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

            rets = evaluate_batched(act, args.eval_episodes, args.eval_envs, seed=10_000 + args.seed)
            state["eval_cpu"] += cpu() - c0
            state["evals"] += 1
            mean = float(np.mean(rets))
            state["history"].append((n, round(mean, 1)))
            if mean >= args.stop_value:
                state.update(stop=True, env_step=n, eval_return=mean, stop_cpu=cpu())
                return False
            return True

    env = make_vec_env("CartPole-v1", n_envs=n_envs, seed=args.seed)
    model = DQN(policy, env, seed=args.seed, verbose=0, device="cpu", **hp)
    # The clock starts where Stride's does: components built, training loop about to start.
    t0 = cpu()
    model.learn(total_timesteps=total, callback=StopOnEval())
    t_end = state.get("stop_cpu", cpu())
    train_cpu = t_end - t0 - state["eval_cpu"]
    n_params = sum(p.numel() for p in model.q_net.parameters())
    res = {
        "contestant": "sb3",
        "seed": args.seed,
        "stop": state["stop"],
        "env_step": state["env_step"] if state["stop"] else int(model.num_timesteps),
        "train_iter": int(model._n_updates),
        "eval_return": state["eval_return"] if state["stop"] else (state["history"][-1][1] if state["history"] else None),
        "train_cpu_seconds": train_cpu,
        "eval_cpu_seconds": state["eval_cpu"],
        "n_evals": state["evals"],
        "eval_history": state["history"],
        "hyperparams_file": zoo["path"],
        "hyperparams_raw": {k: (str(v) if not isinstance(v, (int, float, str)) else v) for k, v in zoo["raw"].items()},
        "n_envs": n_envs,
        "exploration_fraction_used": hp.get("exploration_fraction"),
        "q_net_params": n_params,
        "sb3_version": stable_baselines3.__version__,
        **info,
    }
    emit(res, args.out)


if __name__ == "__main__":
    main()
