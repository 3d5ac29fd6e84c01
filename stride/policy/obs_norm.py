"""Running observation normalisation (``policy.obs_norm``): one component every mode reads.

The statistics are a :class:`~stride.model.common.normalize.RunningNorm` submodule of the model
(``model.obs_norm``), so every state dict and checkpoint that holds the model holds them. Collect
forwards alone move them (:meth:`ObsNorm.observed`); collect, eval and learn inputs are
normalised with them (:class:`~stride.policy.batching.PolicyIO`).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import numpy as np
import torch
from torch import nn

from ..model.common.normalize import RunningNorm
from ..utils.errors import ConfigError
from .views import PolicyConfig

#: a collect forward: ``({env_id: obs}, **collect_kwargs) -> {env_id: output}``
CollectForward = Callable[..., Dict[int, Any]]


class ObsNorm:
    """The model's running observation statistics, and the two things done with them."""

    def __init__(self, norm: RunningNorm) -> None:
        self._norm = norm

    @classmethod
    def attach(cls, model: nn.Module, cfg: PolicyConfig) -> Optional["ObsNorm"]:
        """The model's ``obs_norm`` submodule (added when missing) when the policy config ``cfg``
        asks for ``obs_norm``; None when it does not."""
        if not cfg.obs_norm:
            return None
        existing = getattr(model, "obs_norm", None)
        if isinstance(existing, RunningNorm):
            return cls(existing)
        shape = cfg.model.get("obs_shape")
        if not (isinstance(shape, int) or (isinstance(shape, (list, tuple)) and all(isinstance(s, int) for s in shape))):
            raise ConfigError(f"policy.obs_norm needs policy.model.obs_shape to be an int or a list of ints "
                              f"(a Box observation), got {shape!r}")
        norm = RunningNorm(shape, clip=cfg.obs_norm_clip)
        model.add_module("obs_norm", norm)
        return cls(norm)

    def normalize(self, obs: torch.Tensor) -> torch.Tensor:
        """``obs`` normalised with the running statistics (clipped)."""
        return self._norm.normalize(obs)

    def observed(self, forward: CollectForward) -> CollectForward:
        """``forward`` (a collect forward) whose observations update the statistics first: only
        collect forwards move them (eval and learn forwards never do)."""
        norm = self._norm

        def observing(data: Dict[int, Any], **kwargs: Any) -> Dict[int, Any]:
            if data:
                norm.update(torch.from_numpy(np.asarray(list(data.values()))))
            return forward(data, **kwargs)

        return observing
