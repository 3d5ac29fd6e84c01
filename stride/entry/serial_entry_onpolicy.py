"""``serial_pipeline_onpolicy``: collect -> learn -> evaluate, no replay buffer.

The same pipeline as :func:`stride.entry.serial_pipeline` (which already picks this loop from
``policy.on_policy``); this name exists for DI-engine users and refuses off-policy configs.
Each iteration collects ``policy.collect.n_sample`` fresh samples (the collector keeps none back
for on-policy policies) and hands all of them to one ``learner.train`` call: the policy makes as
many gradient steps on them as it likes (PPO: ``epoch_per_collect`` epochs of minibatches; A2C:
one), so one ``train_iter`` is one collect, and ``eval_freq`` / ``--train-iter`` / checkpoint
frequencies count collects.
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from ..utils.errors import ConfigError
from ..policy.base_policy import Policy
from .serial_entry import load_cfg, serial_pipeline
from .run import Callback
from .utils import ConfigInput


def serial_pipeline_onpolicy(
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
    """Train an on-policy algorithm (PPO, A2C...); returns the policy (``policy.result`` holds the summary).

    Args: as :func:`stride.entry.serial_pipeline`; ``max_train_iter`` counts collects.

    Examples:
        >>> from stride.zoo.cartpole.config.cartpole_ppo_config import main_config, create_config
        >>> policy = serial_pipeline_onpolicy([main_config, create_config], seed=0)  # doctest: +SKIP
    """
    if resume is None and input_cfg is not None:
        cfg, _ = load_cfg(input_cfg, seed, exp_name, None)
        if not cfg.policy.on_policy:
            raise ConfigError(f"policy '{cfg.policy.type}' is off-policy: use serial_pipeline (stride -m serial)")
    return serial_pipeline(input_cfg, seed=seed, model=model, max_train_iter=max_train_iter,
                           max_env_step=max_env_step, exp_name=exp_name, resume=resume, progress=progress,
                           callbacks=callbacks)
