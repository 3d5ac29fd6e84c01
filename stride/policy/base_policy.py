"""``Policy``: the algorithm contract -- one algorithm, three modes (learn / collect / eval) over one model.

The modes are the typed Protocols of :mod:`stride.policy.modes`: a worker calls only what its mode
exposes and reads the policy's settings through typed properties (``n_sample``, ``on_policy``...).
A policy knows nothing about processes, files or loops. An algorithm implements the ``_init_*`` /
``_forward_*`` hooks and composes what the base builds: ``_io`` (batches in, actions out), ``_modes``
(train / eval), ``_replicas`` (how learner replicas agree: given to ``optimise``) and ``_schedules``
(``value(key)``, ``set_lr``: any :class:`~stride.rl_utils.schedule.Scheduled` key may be a schedule;
the counters are saved in the learn state). Exploration is composition (``collect_kwargs``), not
DI-engine's ``<name>_command`` subclasses.
"""

from __future__ import annotations

import importlib
import warnings
from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Type

import torch
from torch import nn

from ..config.config import Config, Configurable, deep_update
from ..config.search import SearchSpace
from ..rl_utils import get_nstep_return_data
from ..rl_utils.schedule import Schedules
from ..torch_utils.module_modes import ModuleModes
from ..torch_utils.replica_sync import replica_sync, sync_gradients
from ..utils.registry import MODEL_REGISTRY
from .action_range import ActionScale
from .batching import PolicyIO
from .modes import (CollectMode, EpisodeState, EvalMode, LearnMode, PolicyCollectMode, PolicyEvalMode,
                    PolicyLearnMode, PolicySettings, Timestep, is_terminated)
from .obs_norm import ObsNorm
from .views import PolicyConfig

__all__ = ["Policy", "LearnMode", "CollectMode", "EvalMode", "Timestep", "is_terminated"]


class Policy(Configurable, ABC):
    """Base class. Subclasses set ``config_view`` (a :class:`~stride.policy.views.PolicyConfig`
    subclass: the declaration, and ``self._typed``, the config as the modes read it;
    ``default_config()``: its plain values) and implement the modes."""

    _optimizer: torch.optim.Optimizer  # set by an algorithm's _init_learn (the base state methods save it)
    #: what the workers read of the policy (``n_sample``, ``unroll_len``...), from its config
    settings: ClassVar[Type[PolicySettings]] = PolicySettings
    #: what the collect mode carries inside episodes (a recurrent policy's states; set by its _init_collect)
    _episodes: Optional[EpisodeState] = None
    #: kept for the seeds' name: average a module's gradients over the learner replicas (no-op in one process)
    sync_gradients = staticmethod(sync_gradients)
    result: Dict[str, Any]  # the summary of the run that trained this policy (set by the entries)
    #: where ``stride -m tune`` searches: dotted keys of the config -> ranges (``stride.config.search``);
    #: an algorithm declares its own next to its defaults (none: the policy cannot be tuned)
    search_space: ClassVar[SearchSpace] = {}

    #: the typed config (its fields are the declaration); an algorithm sets its own subclass
    config_view: ClassVar[Type[PolicyConfig]] = PolicyConfig
    _typed: PolicyConfig  # the config as the constructor and the modes read it (an algorithm narrows the type)

    @classmethod
    def declared_config(cls) -> Dict[str, object]:
        """The declaration of :attr:`config_view`, with the valid values of each key
        (:class:`~stride.config.Setting`): what ``compile_config`` validates a user's config against.
        A subclass written DI-engine's way, with a ``config`` dict, has it merged over its parents'
        (deprecated: subclass the algorithm's view, e.g. ``DQNConfig``, and set ``config_view``)."""
        merged = cls.config_view.declaration()
        for klass in reversed(cls.__mro__):
            if "config" in klass.__dict__:
                warnings.warn(f"{klass.__name__}.config (a dict) is deprecated; subclass {cls.config_view.__name__} "
                              "(a ConfigView) and set it as config_view", DeprecationWarning, stacklevel=2)
                merged = deep_update(merged, klass.__dict__["config"])
        return merged

    @classmethod
    def default_model(cls) -> Tuple[str, Dict[str, object]]:
        """``(registered model name, kwargs)`` used when no model is passed."""
        raise NotImplementedError(f"{cls.__name__} has no default model; pass one")

    def __init__(self, cfg: Mapping[str, object], model: Optional[nn.Module] = None, enable_field: Optional[Sequence[str]] = None) -> None:
        self._cfg = cfg if isinstance(cfg, Config) else Config(cfg)
        self._typed = self.config_view.from_config(self._cfg, "policy.")
        fields = list(enable_field) if enable_field is not None else ["learn", "collect", "eval"]
        unknown = set(fields) - {"learn", "collect", "eval"}
        if unknown:
            raise ValueError(f"unknown policy field(s) {sorted(unknown)}; valid choices: collect, eval, learn")
        self._enable_field = fields
        # CUDA serves learning: a policy without a learn mode (a collector's, an evaluator's, a frozen league
        # player's) acts on the CPU from the weights a GPU learner publishes (its state dicts come on the CPU)
        cuda = self._typed.cuda and "learn" in fields and torch.cuda.is_available()
        self._device = torch.device("cuda" if cuda else "cpu")
        if model is None:  # the model policy.model names (default: the algorithm's), with its keyword arguments
            name, extra = self.default_model()
            kwargs = {**extra, **self._typed.model}
            model = MODEL_REGISTRY.get(str(kwargs.pop("type", name)))(**kwargs)
        obs_norm = ObsNorm.attach(model, self._typed)
        self._model = model.to(self._device)
        # before any mode copies the weights (target networks): all replicas start equal
        multi_gpu = "learn" in fields and self._typed.learn.multi_gpu
        self._replicas = replica_sync(multi_gpu, self._model)
        # continuous actions leave in the env's units (policy.action_range, filled by the entry from its env)
        self._action_scale = ActionScale.from_config(self._typed.action_range, self._typed.model.get("action_shape"))
        self._modes = ModuleModes(self._model)
        self._io = PolicyIO(self._device, obs_norm, self._action_scale, self._modes)
        # the scheduled hyper-parameters (numbers are constant schedules), before any mode reads one
        self._schedules = Schedules.from_config(self.declared_config(), self._cfg)
        for field in fields:
            getattr(self, f"_init_{field}")()
        # the mode views are built once: the loops read ``policy.collect_mode`` every iteration
        settings = self.settings(self._typed)
        self._learn_view = PolicyLearnMode(self._forward_learn, self._monitor_vars_learn, self._state_dict_learn,
                                           self._load_state_dict_learn, self._schedules, settings)
        forward = self._forward_collect if obs_norm is None else obs_norm.observed(self._forward_collect)
        self._collect_view = PolicyCollectMode(
            forward=forward, process_transition=self._process_transition, get_train_sample=self._get_train_sample,
            reset=self._reset_collect, collect_kwargs=self._collect_kwargs, state_dict=self._state_dict_collect,
            load_state_dict=self._load_state_dict_collect, episodes=self._episodes, settings=settings,
            device=self._device)
        self._eval_view = PolicyEvalMode(self._forward_eval, self._reset_eval, self._model, self._device)

    # ---- the three modes ---------------------------------------------------------------------
    @property
    def learn_mode(self) -> LearnMode:
        return self._learn_view

    @property
    def collect_mode(self) -> CollectMode:
        return self._collect_view

    @property
    def eval_mode(self) -> EvalMode:
        return self._eval_view

    @property
    def league_mode(self) -> object:
        """Deprecated: ``stride.league.league_mode(policy)`` (``stride.league.snapshot`` / ``frozen`` /
        ``load_snapshot``); the league lives above the policy layer, so it is imported by name."""
        warnings.warn("policy.league_mode is deprecated; use stride.league.league_mode(policy) (or "
                      "stride.league.snapshot / frozen / load_snapshot)", DeprecationWarning, stacklevel=2)
        mode: object = importlib.import_module("stride.league").league_mode(self)
        return mode

    @property
    def cfg(self) -> Config:
        return self._cfg

    @property
    def model(self) -> nn.Module:
        return self._model

    # ---- learn -------------------------------------------------------------------------------
    @abstractmethod
    def _init_learn(self) -> None: ...

    @abstractmethod
    def _forward_learn(self, data: Any) -> Dict[str, Any]: ...

    def _monitor_vars_learn(self) -> List[str]:
        return ["cur_lr", "total_loss"]

    def _state_dict_learn(self) -> Dict[str, Any]:
        return {"model": self._model.state_dict(), "optimizer": self._optimizer.state_dict()}

    def _load_state_dict_learn(self, state_dict: Dict[str, Any]) -> None:
        self._model.load_state_dict(state_dict["model"])
        self._optimizer.load_state_dict(state_dict["optimizer"])

    # ---- collect -----------------------------------------------------------------------------
    @abstractmethod
    def _init_collect(self) -> None: ...

    @abstractmethod
    def _forward_collect(self, data: Dict[int, Any]) -> Dict[int, Any]: ...

    def _process_transition(self, obs: Any, policy_output: Dict[str, Any], timestep: Any) -> Dict[str, Any]:
        """The off-policy transition; ``done`` means terminated (see :func:`is_terminated`)."""
        return {"obs": obs, "action": policy_output["action"], "reward": timestep.reward,
                "next_obs": timestep.obs, "done": is_terminated(timestep)}

    def _get_train_sample(self, transitions: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """n-step samples (``policy.nstep``, default 1), each with its bootstrap ``value_gamma``.
        1-step samples are the transitions themselves (no copy, no ``value_gamma``): learners
        bootstrap with ``discount_factor`` when a sample carries no ``value_gamma``."""
        nstep = self._typed.nstep
        if nstep == 1:
            return transitions
        return get_nstep_return_data(transitions, nstep, self._typed.discount_factor)

    def _reset_collect(self, data_id: Optional[List[int]] = None) -> None:
        pass

    def _collect_kwargs(self, envstep: int = 0, train_iter: int = 0) -> Dict[str, Any]:
        """Keyword arguments for ``collect_mode.forward`` at this point of training (e.g. ``eps``)."""
        return {}

    def _state_dict_collect(self) -> Dict[str, Any]:
        return {"model": self._model.state_dict()}

    def _load_state_dict_collect(self, state_dict: Dict[str, Any]) -> None:
        self._model.load_state_dict(state_dict["model"])

    # ---- eval --------------------------------------------------------------------------------
    @abstractmethod
    def _init_eval(self) -> None: ...

    @abstractmethod
    def _forward_eval(self, data: Dict[int, Any]) -> Dict[int, Any]: ...

    def _reset_eval(self, data_id: Optional[List[int]] = None) -> None:
        pass


    def __repr__(self) -> str:
        return f"{type(self).__name__}(fields={self._enable_field}, device={self._device})"

