"""rl-zoo3 hyper-parameters: read from the installed package's ``hyperparams/<algo>.yml`` at run time
and preprocessed the way rl-zoo3's ExpManager does (``n_envs`` default 1, ``policy_kwargs`` eval'd,
``lin_<x>`` strings -> linear schedules, ``n_timesteps`` removed).

Linear schedules: SB3 anneals over ``total_timesteps``; rl-zoo3 trains for ``n_timesteps``. The
benchmarks pass their step cap as ``total_timesteps``, so each ``lin_`` schedule is rescaled to keep
rl-zoo3's *absolute* schedule (0 after ``n_timesteps`` env steps, then 0).
"""

from __future__ import annotations

import importlib.util
import os
from typing import Callable, Tuple


def rl_zoo3_hyperparams(algo: str, env_id: str) -> dict:
    """``{"path": yml file, "raw": the env's entry}`` from the installed rl_zoo3 (not imported)."""
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


def preprocess(raw: dict, total: int) -> Tuple[dict, int, int]:
    """``(SB3 keyword arguments incl. 'policy', n_envs, n_timesteps)`` from a raw rl-zoo3 entry."""
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
