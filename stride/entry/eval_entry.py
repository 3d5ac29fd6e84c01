"""``eval_pipeline``: a fresh evaluation of a trained policy, from its experiment folder.

The stop value a run reports is judged on the evaluator envs it watched during training; a policy
that just crossed the line there can fall short on other episodes. This entry loads the run's
saved config (``total_config.json``: data, never executed) and a checkpoint (the latest by
default), builds the eval mode only (no optimizer, no buffer, no collector), and runs ``n_episode``
episodes on evaluator envs seeded apart from training's (``seed`` default: the run's seed +
10000). DI-engine's ``eval`` entry needs the Python config and reseeds every episode alike; this
one needs only the experiment folder, and each env runs distinct episodes. The result is printed
and written (atomically) to ``<exp>/eval/<checkpoint>_seed<S>_episodes<N>.json``: checkpoint, seed and
episode count decide the returns, so the same evaluation again rewrites the same file, and evaluations
of other sizes (a quick 2-episode look, the 100-episode confirmation) are kept side by side.
"""

from __future__ import annotations

import os
from typing import List, Optional, TypedDict

import numpy as np

from ..config.compile import load_saved_config
from ..envs.replay import require_video
from ..utils.errors import ConfigError
from ..utils.files import atomic_write_json
from ..utils.narrow import as_int, as_mapping
from ..utils.registry import import_components
from ..worker import BaseSerialEvaluator
from ..worker.learner.learner import read_checkpoint
from .run import seed_run
from .utils import build_env_managers, build_policy, resolve_resume

FRESH_SEED_OFFSET = 10_000  # evaluator envs of training are seeded with the run's seed


class EvalResult(TypedDict):
    """What :func:`eval_pipeline` returns (and writes, but ``result_file``, as JSON)."""

    exp_dir: str
    checkpoint: str
    train_iter: int
    envstep: int
    seed: int
    n_episode: int
    mean: float
    std: float
    min: float
    max: float
    stop_value: Optional[float]
    reached: Optional[bool]
    returns: List[float]
    result_file: str


def result_file_name(checkpoint: str, seed: int, n_episode: int) -> str:
    """The file name of an evaluation's result: one per (checkpoint, seed, episode count), the three
    inputs that decide its returns, so evaluations of different sizes never overwrite each other."""
    return f"{checkpoint}_seed{seed}_episodes{n_episode}.json"


def eval_pipeline(path: str, n_episode: Optional[int] = None, seed: Optional[int] = None,
                  replay_path: Optional[str] = None) -> EvalResult:
    """Evaluate the policy saved under ``path`` (an experiment folder -> its latest checkpoint, or a
    checkpoint file) over ``n_episode`` episodes (default: the config's confirmation size
    ``policy.eval.evaluator.confirm_episode``, else ``env.n_evaluator_episode``)
    on evaluator envs seeded ``seed`` (default: the run's seed + 10000). Returns the summary
    (mean, std, min, max, returns, whether the mean reaches ``env.stop_value``). With ``replay_path``
    each evaluated episode is also written as an mp4, ``<replay_path>/env<i>/episode<k>.mp4``
    (env ``i``'s ``k``-th episode; needs the ``[video]`` extra)."""
    if replay_path is not None:
        require_video()  # before any work: a missing extra is one line
    exp_dir, ckpt = resolve_resume(path)
    cfg = load_saved_config(os.path.join(exp_dir, "total_config.json"))
    if n_episode is not None and n_episode < 1:
        raise ConfigError(f"the number of evaluation episodes must be >= 1, got {n_episode}")
    confirm = int(cfg.policy.eval.evaluator.confirm_episode)
    n_episode = int(n_episode if n_episode is not None else (confirm or cfg.env.n_evaluator_episode))
    seed = int(seed if seed is not None else cfg.seed + FRESH_SEED_OFFSET)
    import_components()
    seed_run(cfg, seed)
    policy = build_policy(cfg, enable_field=["eval"])
    state = read_checkpoint(ckpt)
    policy.eval_mode.load_state_dict({"model": as_mapping(state["policy"], "checkpoint 'policy'")["model"]})
    collector_env, env = build_env_managers(cfg, seed)
    if replay_path is not None:
        env.enable_save_replay(replay_path)
    try:
        evaluator = BaseSerialEvaluator(dict(cfg.policy.eval.evaluator, confirm_episode=0), env, policy.eval_mode)
        _, returns = evaluator.eval(n_episode=n_episode)
    finally:
        env.close()
        collector_env.close()
    r = np.asarray(returns, dtype=np.float64)
    stop_value = cfg.env.get("stop_value")
    out_dir = os.path.join(exp_dir, "eval")
    name = os.path.basename(ckpt).replace(".pth.tar", "")
    out = os.path.join(out_dir, result_file_name(name, seed, int(r.size)))
    result: EvalResult = {
        "exp_dir": os.path.abspath(exp_dir), "checkpoint": os.path.abspath(ckpt),
        "train_iter": as_int(state.get("train_iter", -1), "checkpoint 'train_iter'"),
        "envstep": as_int(state.get("envstep", -1), "checkpoint 'envstep'"),
        "seed": seed, "n_episode": int(r.size), "mean": float(r.mean()), "std": float(r.std()),
        "min": float(r.min()), "max": float(r.max()), "stop_value": stop_value,
        "reached": None if stop_value is None else bool(r.mean() >= stop_value), "returns": r.tolist(), "result_file": out,
    }
    os.makedirs(out_dir, exist_ok=True)
    atomic_write_json(out, {k: v for k, v in result.items() if k != "result_file"})
    return result
