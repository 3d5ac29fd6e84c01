"""``BaseRewardModel``: what every reward model (GAIL, HER, RND) does between collection and learning.

The reward-model pipeline (:func:`stride.entry.serial_pipeline_reward_model`) calls, per
iteration: ``collect_data(new_data)`` with the fresh collect, ``train()``, ``clear_data()`` every
``clear_buffer_per_iters`` iterations, and ``estimate(batch)`` on every batch before the learner
sees it. ``estimate`` returns a new batch (it may rewrite or add rewards, or turn stored episodes
into relabelled transitions, as HER does); what the replay buffer holds is never changed, so a
batch sampled twice is estimated twice with the model of the moment. The model's whole state is
in ``state_dict()`` (tensors and plain values), which the learner's checkpoint carries: a resumed
run continues with the same reward model, RNG included -- DI-engine's reward-model pipelines
save only the policy, so their resumed GAIL/RND runs restart the discriminator/predictor.

A reward model is built by name (``reward_model.type``) from :data:`REWARD_MODEL_REGISTRY`;
entries and workers never name a concrete one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Sequence, Union

from ..config.config import Configurable
from ..config.view import ConfigView, setting
from ..utils.registry import REWARD_MODEL_REGISTRY

#: what replay gives and the learner takes: a list of samples (or of episodes) or a dict of columns
Batch = Union[Sequence[Mapping[str, object]], Mapping[str, object]]


@dataclass(frozen=True)
class RewardModelConfig(ConfigView):
    """``reward_model``: what every reward model has; a model's own view subclasses it."""

    #: (str) the registered reward-model name.
    type: Optional[str] = None
    #: (int) clear_data() every this many iterations (0: never).
    clear_buffer_per_iters: int = setting(0, "[0, inf)")


class BaseRewardModel(Configurable, ABC):
    """The reward-model interface; a subclass declares its config as a :class:`RewardModelConfig`
    subclass (its :attr:`config_view`).

    Args:
        cfg: the ``reward_model`` config section (validated against the declaration).
        env: an env of the run's kind (not stepped), for models that need the env's own functions
            (HER: ``compute_reward``); None where the model needs none.
        seed: seeds the model's own RNG (sampling, initialisation).
    """

    config_view = RewardModelConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None, env: Optional[object] = None,
                 seed: Optional[int] = None) -> None:
        self._cfg = self.typed_config(RewardModelConfig, cfg, prefix="reward_model.")

    @property
    def cfg(self) -> RewardModelConfig:
        """The typed config this model was built with (its class's :attr:`config_view`)."""
        return self._cfg

    def batch_items(self, batch_size: int) -> int:
        """How many replay items one learner batch of ``batch_size`` needs (one item per sample;
        a model that turns each item into several samples, like HER's episodes, asks for fewer)."""
        return batch_size

    @abstractmethod
    def estimate(self, batch: Batch) -> Batch:
        """A learner batch made from the sampled ``batch``: rewards rewritten or added (a copy;
        the replay buffer's data stays as collected)."""

    def collect_data(self, data: Sequence[object]) -> None:
        """Take a collect's fresh data (transitions or episodes) for :meth:`train`; default: none kept."""

    def train(self) -> None:
        """Update the model on the data it holds; default: nothing to learn."""

    def clear_data(self) -> None:
        """Drop the data :meth:`collect_data` kept; default: none kept."""

    def state_dict(self) -> Dict[str, object]:
        """Everything a resumed run needs (tensors and plain values)."""
        return {}

    def load_state_dict(self, state_dict: Mapping[str, object]) -> None:
        """Restore what :meth:`state_dict` returned."""


def create_reward_model(cfg: Mapping[str, object], env: Optional[object] = None,
                        seed: Optional[int] = None) -> BaseRewardModel:
    """The reward model ``cfg['type']`` names (an unknown name fails with the valid ones)."""
    name = cfg.get("type")
    if not isinstance(name, str):
        raise TypeError(f"reward_model.type must be a registered name, got {name!r}")
    model = REWARD_MODEL_REGISTRY.build(name, cfg, env=env, seed=seed)
    if not isinstance(model, BaseRewardModel):
        raise TypeError(f"reward model '{name}' built a {type(model).__name__}, not a BaseRewardModel")
    return model
