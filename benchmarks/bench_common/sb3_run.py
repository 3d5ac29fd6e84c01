"""SB3 contestant: stable-baselines3 ``DQN`` / ``PPO`` / ``SAC`` on a case's env (:mod:`bench_common.cases`)
with rl-zoo3's tuned hyper-parameters for the case's entry (:mod:`bench_common.rlzoo`), trained to the
stop rule of :mod:`bench_common.sb3`. Run as ``python -m bench_common.sb3_run --case dqn|ppo|sac|... ...``
(``--algo`` is the same flag, its issue-13 name).

DQN exploration: SB3 anneals eps over ``exploration_fraction * total_timesteps``; rl-zoo3 trains for
``n_timesteps``. We pass the step cap as ``total_timesteps``, so ``exploration_fraction`` is rescaled
to keep rl-zoo3's absolute schedule (eps reaches its final value after
``exploration_fraction * n_timesteps`` env steps).
"""

from __future__ import annotations

import argparse

from bench_common.cases import CASES
from bench_common.evaluate import evaluate_batched
from bench_common.proc import emit, setup_process
from bench_common.rlzoo import preprocess, rl_zoo3_hyperparams
from bench_common.sb3 import learn_until_stop


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", "--algo", dest="case", choices=sorted(CASES), required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-env-steps", type=int, default=200_000)
    ap.add_argument("--eval-every", type=int, default=2560)
    ap.add_argument("--eval-episodes", type=int, default=100)
    ap.add_argument("--eval-envs", type=int, default=8)
    ap.add_argument("--confirm-episodes", type=int, default=0,
                    help="an evaluation reaching the stop value is a screen; this many further episodes (other "
                         "seeds) of the same policy must reach it too (0: the evaluation alone stops the run)")
    ap.add_argument("--fresh-episodes", type=int, default=0,
                    help="after the run, evaluate the returned policy on this many episodes of yet other seeds")
    ap.add_argument("--stop-value", type=float, required=True)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    info = setup_process(args.seed)

    import stable_baselines3
    from stable_baselines3 import DQN, PPO, SAC
    from stable_baselines3.common.env_util import make_vec_env

    case = CASES[args.case]
    env_id = case.env_id
    zoo = rl_zoo3_hyperparams(case.algo, case.rlzoo_env)
    total = args.max_env_steps
    hp, n_envs, n_timesteps = preprocess(zoo["raw"], total)
    policy = hp.pop("policy")
    if case.algo == "dqn" and "exploration_fraction" in hp:
        hp["exploration_fraction"] = min(1.0, hp["exploration_fraction"] * n_timesteps / total)

    def evaluate(act_fn):
        return evaluate_batched(act_fn, args.eval_episodes, args.eval_envs, 10_000 + args.seed, env_id)

    def confirm(act_fn):
        return evaluate_batched(act_fn, args.confirm_episodes, args.eval_envs, 20_000 + args.seed, env_id)

    env = make_vec_env(env_id, n_envs=n_envs, seed=args.seed)
    cls = {"dqn": DQN, "ppo": PPO, "sac": SAC}[case.algo]
    model = cls(policy, env, seed=args.seed, verbose=0, device="cpu", **hp)
    run = learn_until_stop(model, total, evaluate, args.eval_every, args.stop_value,
                           confirm if args.confirm_episodes else None)
    if args.fresh_episodes:
        import torch

        def act(batch):
            with torch.no_grad():
                return model.predict(batch, deterministic=True)[0]

        run["fresh_returns"] = evaluate_batched(act, args.fresh_episodes, args.eval_envs, 30_000 + args.seed, env_id)
    res = {
        "contestant": "sb3", "case": args.case, "algo": case.algo, "rlzoo_env": case.rlzoo_env, "seed": args.seed,
        **run, "hyperparams_file": zoo["path"],
        "hyperparams_raw": {k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in zoo["raw"].items()},
        "n_envs": n_envs, "n_timesteps": n_timesteps,
        "n_params": int(sum(p.numel() for p in model.policy.parameters())),
        "sb3_version": stable_baselines3.__version__, **info,
    }
    if case.algo == "dqn":
        res.update(exploration_fraction_used=hp.get("exploration_fraction"),
                   q_net_params=int(sum(p.numel() for p in model.q_net.parameters())))
    emit(res, args.out)


if __name__ == "__main__":
    main()
