"""Stop-on-evaluation training of an SB3 model, with the CPU bookkeeping of the benchmarks.

Stop rule (the same as Stride's evaluator): every ``eval_every`` env steps an evaluation (the
caller's ``evaluate``, e.g. a deterministic run of :func:`bench_common.evaluate.evaluate_batched`);
with ``confirm`` given, an evaluation whose mean reaches ``stop_value`` is only a screen, and the
run stops when ``confirm`` (e.g. 100 further episodes on other seeds) of the same policy reaches it
too; without ``confirm`` the evaluation alone stops the run. Train CPU s = process CPU from the
start of ``learn()`` (model and envs built, as Stride's clock starts after its components are
built) to the stopping evaluation, minus the CPU measured around every evaluation.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

import numpy as np

from bench_common.proc import cpu, log

Evaluate = Callable[[Callable[[np.ndarray], np.ndarray]], List[float]]


def learn_until_stop(model: Any, total: int, evaluate: Evaluate, eval_every: int, stop_value: float,
                     confirm: Optional[Evaluate] = None) -> dict:
    """``model.learn(total)`` with the stop-on-evaluation callback; returns the run's counts and CPU."""
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    state = {"eval_cpu": 0.0, "evals": 0, "stop": False, "env_step": None, "eval_return": None,
             "confirm_return": None, "last_eval": 0, "history": [], "unconfirmed": [], "first_screen_hit": None, "n_updates": 0}

    class StopOnEval(BaseCallback):
        def _count_updates(self) -> None:
            # SB3 logs its gradient-step count as "train/n_updates" after each train() (public Logger
            # values, cleared at each dump: read on every callback, before the next dump can happen)
            updates = self.model.logger.name_to_value.get("train/n_updates")
            if updates:
                state["n_updates"] = max(state["n_updates"], int(updates))

        def _on_training_end(self) -> None:
            self._count_updates()

        def _on_step(self) -> bool:
            self._count_updates()
            n = self.num_timesteps
            if n - state["last_eval"] < eval_every:
                return True
            state["last_eval"] = n - n % eval_every
            c0 = cpu()

            def act(batch):
                with torch.no_grad():
                    a, _ = self.model.predict(batch, deterministic=True)
                return a

            mean = float(np.mean(evaluate(act)))
            state["evals"] += 1
            confirmed = None
            if mean >= stop_value and confirm is not None:
                if state["first_screen_hit"] is None:
                    state["first_screen_hit"] = n
                confirmed = float(np.mean(confirm(act)))
                if confirmed < stop_value:
                    state["unconfirmed"].append((n, round(mean, 1), round(confirmed, 1)))
            state["eval_cpu"] += cpu() - c0
            state["history"].append((n, round(mean, 1)) if confirmed is None else (n, round(mean, 1), round(confirmed, 1)))
            log(f"[sb3] env step {n}: screen {mean:.1f}" + ("" if confirmed is None else f", confirmation {confirmed:.1f}")
                + f"; train CPU so far {cpu() - t0 - state['eval_cpu']:.1f} s")
            if mean >= stop_value and (confirm is None or confirmed >= stop_value):
                state.update(stop=True, env_step=n, eval_return=mean, confirm_return=confirmed, stop_cpu=cpu())
                return False
            return True

    t0 = cpu()  # components built, training loop about to start (where Stride's clock starts)
    model.learn(total_timesteps=total, callback=StopOnEval())
    t_end = state.get("stop_cpu", cpu())
    return {
        "stop": state["stop"],
        "env_step": state["env_step"] if state["stop"] else int(model.num_timesteps),
        "train_iter": state["n_updates"],  # SB3's n_updates: gradient steps (DQN, SAC), epochs (PPO)
        "eval_return": state["eval_return"] if state["stop"] else (state["history"][-1][1] if state["history"] else None),
        "confirm_return": state["confirm_return"],
        "first_screen_hit": state["first_screen_hit"],
        "unconfirmed": state["unconfirmed"],
        "train_cpu_seconds": t_end - t0 - state["eval_cpu"],
        "eval_cpu_seconds": state["eval_cpu"],
        "n_evals": state["evals"],
        "eval_history": state["history"],
    }
