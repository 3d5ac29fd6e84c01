"""``serial_pipeline_reward_model``: the serial pipeline with a reward model (GAIL, HER, RND).

The seeds' third pattern, "DRL + RewardModel": collect -> ``reward_model.collect_data`` /
``train`` -> buffer -> sample -> ``reward_model.estimate`` -> learn. It is
:func:`stride.entry.serial_pipeline`'s one loop (which runs any config's ``reward_model``
section); these names, DI-engine's, refuse a config without one, so a forgotten section is an
error rather than a silent run on the env's reward. Off- and on-policy alike (the loop picks by
``policy.on_policy``); ``serial_pipeline_reward_model_onpolicy`` also refuses an off-policy config.
DI-engine keeps two copies of this loop (``serial_entry_reward_model_offpolicy`` / ``_onpolicy``)
beside the plain one and checkpoints no reward model; here a resumed run restores it exactly.
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from ..policy.base_policy import Policy
from ..utils.errors import ConfigError
from .serial_entry import load_cfg, serial_pipeline
from .run import Callback
from .utils import ConfigInput


def serial_pipeline_reward_model(
    input_cfg: Optional[ConfigInput],
    seed: int = 0,
    model: Optional[torch.nn.Module] = None,
    max_train_iter: Optional[int] = None,
    max_env_step: Optional[int] = None,
    exp_name: Optional[str] = None,
    resume: Optional[str] = None,
    progress: bool = True,
    on_policy: Optional[bool] = None,
    callbacks: Optional[Sequence[Callback]] = None,
) -> Policy:
    """Train with the config's reward model; returns the policy (``policy.result`` holds the summary).

    Args: as :func:`stride.entry.serial_pipeline`; ``on_policy`` (True / False) also requires the
    policy to be on- / off-policy.

    Examples:
        >>> from stride.zoo.bitflip.config.bitflip_dqn_her_config import main_config, create_config
        >>> policy = serial_pipeline_reward_model([main_config, create_config], seed=0)  # doctest: +SKIP
    """
    cfg, _ = load_cfg(input_cfg, seed, exp_name, resume)
    if cfg.get("reward_model") is None:
        raise ConfigError("the config has no reward_model section (e.g. reward_model=dict(type='her')); "
                          "use serial_pipeline (stride -m serial) to train on the env's reward")
    if on_policy is not None and bool(cfg.policy.on_policy) != on_policy:
        kind = "off" if on_policy else "on"
        raise ConfigError(f"policy '{cfg.policy.type}' is {kind}-policy: use serial_pipeline_reward_model"
                          f"{'' if on_policy else '_onpolicy'}")
    return serial_pipeline(input_cfg, seed=seed, model=model, max_train_iter=max_train_iter,
                           max_env_step=max_env_step, exp_name=exp_name, resume=resume, progress=progress,
                           callbacks=callbacks)


def serial_pipeline_reward_model_onpolicy(
    input_cfg: Optional[ConfigInput],
    seed: int = 0,
    model: Optional[torch.nn.Module] = None,
    max_train_iter: Optional[int] = None,
    max_env_step: Optional[int] = None,
    exp_name: Optional[str] = None,
    resume: Optional[str] = None,
    progress: bool = True,
    callbacks: Optional[Sequence[Callback]] = None,
) -> Policy:
    """:func:`serial_pipeline_reward_model` for on-policy policies (PPO + RND); refuses off-policy ones."""
    return serial_pipeline_reward_model(input_cfg, seed=seed, model=model, max_train_iter=max_train_iter,
                                        max_env_step=max_env_step, exp_name=exp_name, resume=resume,
                                        progress=progress, on_policy=True, callbacks=callbacks)
