"""``collect_demo_data``: roll out a trained expert and write its episodes as a Minari dataset.

The expert is the checkpoint's *eval* policy (greedy: argmax for discrete actions, the mean for
continuous ones), stepped by the ordinary :class:`~stride.worker.collector.EpisodeCollector` on the
config's collector env manager (dynamic seeds derived from ``seed``) -- the same stepping loop as
training, no second one. Each transition is recorded raw (obs, action, reward, next_obs,
terminated, truncated), whatever the expert's algorithm stores for itself, and whole episodes go
to :func:`stride.data.demo.write_demo_dataset` (atomic; env spec, seed, returns and the checkpoint
recorded), each with the reset seed the env manager gave its episode, in Minari's episode metadata:
the episode replays (the env reset with that seed, the recorded actions stepped). ``collect_count``
counts transitions as DI-engine does, rounded up to whole episodes.
Episodes are kept in the order they finish, so with several envs and few episodes the short ones are
over-represented (50 LunarLander episodes from 8 envs averaged 216.0, the expert's fresh 100-episode
evaluation 228.7: part of that gap may be this); set ``env.collector_env_num=1`` for an unbiased sample.

Better than DI-engine on purpose: its ``collect_demo_data`` samples with the *collect* policy
(exploration noise included), cuts the last episode mid-way at ``collect_count`` and pickles the
list; here the demonstrations are the greedy expert's whole episodes in a standard format.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Mapping, Optional

import numpy as np

from ..config.compile import env_kwargs
from ..data.demo import stack_episode, write_demo_dataset
from ..policy.modes import CollectMode, CollectSettings, EvalMode, PolicyCollectMode, is_terminated
from ..utils.errors import ConfigError
from ..utils.narrow import as_mapping
from ..utils.registry import import_components
from ..worker import create_collector
from ..worker.collector.episode_collector import EpisodeCollector
from ..worker.learner.learner import read_checkpoint
from .run import seed_run
from .serial_entry import load_cfg
from .utils import ConfigInput, build_env_manager, build_policy, check_spaces, resolve_resume


def expert_collect_mode(eval_mode: EvalMode, settings: CollectSettings,
                        episode_seed: Callable[[int], Optional[int]]) -> CollectMode:
    """A collect mode that acts with ``eval_mode`` (greedy, no exploration) and records raw transitions,
    each with its episode's reset seed (``episode_seed(env_id)``, the env manager's); its settings
    (``n_episode``...) are ``settings``' (the policy's collect mode)."""

    def forward(data: Dict[int, Any], **kwargs: Any) -> Dict[int, Any]:
        return {env_id: {**out, "seed": episode_seed(env_id)} for env_id, out in eval_mode.forward(data).items()}

    def process_transition(obs: Any, output: Mapping[str, Any], timestep: Any) -> Dict[str, Any]:
        terminated = is_terminated(timestep)
        return {"obs": obs, "action": output["action"], "reward": np.float32(np.asarray(timestep.reward).item()),
                "next_obs": timestep.obs, "terminated": terminated,
                "truncated": bool(timestep.done and not terminated), "seed": output["seed"]}

    def whole(transitions: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        return transitions

    def no_kwargs(envstep: int = 0, train_iter: int = 0) -> Dict[str, Any]:
        return {}

    return PolicyCollectMode(forward=forward, process_transition=process_transition, get_train_sample=whole,
                             reset=eval_mode.reset, collect_kwargs=no_kwargs, state_dict=eval_mode.state_dict,
                             load_state_dict=eval_mode.load_state_dict, settings=settings,
                             episodes=None)  # its per-env state is the eval mode's: no demo checkpoint keeps it


def _checkpoint(path: str) -> str:
    """A checkpoint file, or an experiment folder's latest checkpoint."""
    if os.path.isdir(path):
        return resolve_resume(path)[1]
    if not os.path.isfile(path):
        raise ConfigError(f"expert checkpoint '{path}' does not exist (give a checkpoint file, e.g. a run's "
                          "policy.result['final_checkpoint'], or an experiment folder)")
    return path


def collect_demo_data(input_cfg: ConfigInput, seed: int, expert_model_path: str, collect_count: Optional[int] = None,
                      *, n_episode: Optional[int] = None, out_dir: Optional[str] = None) -> str:
    """Roll out the expert saved at ``expert_model_path`` (a checkpoint file or an experiment folder)
    with the config's env and policy, for ``collect_count`` transitions (whole episodes, at least
    that many steps) or ``n_episode`` episodes (give one), and write them as a Minari dataset in
    ``out_dir`` (default ``<exp_name>_demo_seed<seed>``; never overwritten). Returns its path.

    Examples:
        >>> from stride.zoo.cartpole.config.cartpole_dqn_config import main_config, create_config
        >>> path = collect_demo_data([main_config, create_config], 0, "cartpole_dqn_seed0", n_episode=10)  # doctest: +SKIP
    """
    if (collect_count is None) == (n_episode is None):
        raise ConfigError(f"give exactly one of collect_count (transitions) and n_episode (episodes), got "
                          f"collect_count={collect_count}, n_episode={n_episode}")
    wanted = collect_count if collect_count is not None else n_episode
    if wanted is None or int(wanted) < 1:
        raise ConfigError(f"the amount of demonstration data must be >= 1, got {wanted}")
    import_components()
    cfg, _ = load_cfg(input_cfg, seed, None, None)
    out = out_dir if out_dir is not None else f"{cfg.exp_name}_demo_seed{seed}"
    if os.path.exists(out):
        raise ConfigError(f"'{out}' already exists (a dataset is never overwritten): give a new --out folder")
    ckpt = _checkpoint(expert_model_path)
    seed_run(cfg, seed)
    env = build_env_manager(cfg, seed, evaluator=False)
    try:
        check_spaces(cfg, env)  # before the policy: it takes what it needs of the env's spaces
        policy = build_policy(cfg, enable_field=["eval"])
        model_state = as_mapping(read_checkpoint(ckpt)["policy"], "checkpoint 'policy'").get("model")
        try:
            policy.eval_mode.load_state_dict({"model": model_state})
        except (RuntimeError, KeyError, TypeError) as e:
            reason = " ".join(str(e).split())  # torch's message spans lines: missing / unexpected keys, shapes
            reason = reason if len(reason) <= 300 else reason[:297] + "..."
            raise ConfigError(f"checkpoint '{ckpt}' does not fit policy '{cfg.policy.type}' of this config (an expert "
                              f"of another env or algorithm?): {reason or type(e).__name__}") from None
        expert = expert_collect_mode(policy.eval_mode, policy.collect_mode, env.episode_seed)
        collector = create_collector({"type": "episode"}, env, expert)
        assert isinstance(collector, EpisodeCollector)  # the registered 'episode' collector
        episodes: List[List[Dict[str, Any]]] = []
        steps = 0
        while (len(episodes) if n_episode is not None else steps) < int(wanted):
            batch = collector.collect(n_episode=int(wanted) - len(episodes) if n_episode is not None else 1)
            episodes.extend(batch)
            steps += sum(len(ep) for ep in batch)
        make = dict(cfg.env.get("make_kwargs") or {})
        if cfg.env.get("max_episode_steps") is not None:
            make["max_episode_steps"] = cfg.env.max_episode_steps
        return write_demo_dataset(
            out, [stack_episode(ep) for ep in episodes], env.observation_space, env.action_space,
            env_id=cfg.env.get("env_id"), env_kwargs=make, seed=seed, algorithm_name=f"stride-{cfg.policy.type}",
            episode_seeds=[ep[0]["seed"] for ep in episodes],
            extra={"env_type": cfg.env.type, "env_cfg": env_kwargs(cfg.env), "policy_type": cfg.policy.type,
                   "checkpoint": os.path.abspath(ckpt), "collector_env_num": env.env_num})
    finally:
        env.close()
