"""Stop-on-evaluation training of an SB3 model, with the CPU bookkeeping of the benchmarks.

Stop rule (identical to Stride's): every ``eval_every`` env steps an evaluation (the caller's
``evaluate``, e.g. a 100-episode deterministic run of :func:`bench_common.evaluate.evaluate_batched`);
stop when its mean return is >= ``stop_value``. Train CPU s = process CPU from the start of ``learn()``
(model and envs built, as Stride's clock starts after its components are built) to the passing
evaluation, minus the CPU measured around each evaluation.
"""

from __future__ import annotations

from typing import Any, Callable, List

import numpy as np

from bench_common.proc import cpu

Evaluate = Callable[[Callable[[np.ndarray], np.ndarray]], List[float]]


def learn_until_stop(model: Any, total: int, evaluate: Evaluate, eval_every: int, stop_value: float) -> dict:
    """``model.learn(total)`` with the stop-on-evaluation callback; returns the run's counts and CPU."""
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    state = {"eval_cpu": 0.0, "evals": 0, "stop": False, "env_step": None, "eval_return": None,
             "last_eval": 0, "history": []}

    class StopOnEval(BaseCallback):
        def _on_step(self) -> bool:
            n = self.num_timesteps
            if n - state["last_eval"] < eval_every:
                return True
            state["last_eval"] = n - n % eval_every
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
            if mean >= stop_value:
                state.update(stop=True, env_step=n, eval_return=mean, stop_cpu=cpu())
                return False
            return True

    t0 = cpu()  # components built, training loop about to start (where Stride's clock starts)
    model.learn(total_timesteps=total, callback=StopOnEval())
    t_end = state.get("stop_cpu", cpu())
    return {
        "stop": state["stop"],
        "env_step": state["env_step"] if state["stop"] else int(model.num_timesteps),
        "train_iter": int(model._n_updates),  # gradient steps (PPO: minibatch gradient steps)
        "eval_return": state["eval_return"] if state["stop"] else (state["history"][-1][1] if state["history"] else None),
        "train_cpu_seconds": t_end - t0 - state["eval_cpu"],
        "eval_cpu_seconds": state["eval_cpu"],
        "n_evals": state["evals"],
        "eval_history": state["history"],
    }
