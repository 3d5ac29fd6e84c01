"""``Policy``: one algorithm, three modes (learn / collect / eval) over one shared model.

Each mode is a namedtuple of bound methods (the seeds' design), so a worker can only call what
its mode exposes. A policy knows nothing about processes, files or loops. Exploration schedules
are composition (``collect_kwargs``), not DI-engine's ``<name>_command`` subclasses. Every
hyper-parameter declared :class:`~stride.rl_utils.schedule.Scheduled` may be a schedule dict in the
config; the algorithm reads it with ``_hp`` (learning rates: ``_set_lr``), and the counters the
schedules follow are saved in the learn state dict (``schedule_counters``), so a resumed run goes on
where it stopped.
"""

from __future__ import annotations

import copy
import importlib
import warnings
from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, Dict, Iterable, List, Mapping, NamedTuple, Optional, Protocol, Sequence, Tuple, Union, cast

import numpy as np
import torch
from torch import nn

from ..config.config import Config, deep_update
from ..config.setting import REQUIRED, Setting, plain
from ..config.search import SearchSpace
from ..model.common.normalize import RunningNorm
from ..rl_utils import get_nstep_return_data
from ..rl_utils.schedule import Schedules
from ..torch_utils import step, to_device, to_tensor
from ..torch_utils.dist import LAUNCH_HINT, Moments, allreduce_gradients, broadcast_module, in_process_group, local_moments, moments
from ..utils.data import Nested, default_collate
from ..utils.errors import ConfigError
from ..utils.registry import MODEL_REGISTRY
from .action_range import ActionScale

class Timestep(Protocol):
    """What a policy reads of an env's timestep (``stride.envs.BaseEnvTimestep`` is one)."""

    @property
    def done(self) -> bool:
        """Whether the episode ended at this step (terminated or truncated)."""

    @property
    def info(self) -> Mapping[str, object]:
        """``terminated`` / ``truncated`` and the env's own entries."""


def is_terminated(timestep: Timestep) -> bool:
    """Whether a step ended the episode in a terminal state (no bootstrap). A time-limit truncation
    is not terminal: TD targets still bootstrap from its true final observation. Envs that only say
    ``done`` are taken as terminated (DI-engine's convention)."""
    info = timestep.info
    return bool(timestep.done and info.get("terminated", not info.get("truncated", False)))


class LearnMode(NamedTuple):
    """What the learner may call: ``forward(batch) -> {name: scalar}`` and the state methods. A scalar
    is a number or a detached one-element tensor on the policy's device: the learner's log hook reads
    tensors only when it writes (a GPU step then never waits for its kernels); ``priority``, when
    there, is a NumPy array (the buffer needs it now)."""

    forward: Callable[[Any], Dict[str, Any]]
    reset: Callable[..., None]
    monitor_vars: Callable[[], List[str]]
    state_dict: Callable[[], Dict[str, Any]]
    load_state_dict: Callable[[Dict[str, Any]], None]
    get_attribute: Callable[[str], Any]
    set_attribute: Callable[[str, Any], None]


class CollectMode(NamedTuple):
    """What a collector may call: ``forward({env_id: obs}, **collect_kwargs) -> {env_id: output}``,
    ``process_transition``, ``get_train_sample`` and the state methods."""

    forward: Callable[..., Dict[int, Any]]
    process_transition: Callable[[Any, Dict[str, Any], Any], Dict[str, Any]]
    get_train_sample: Callable[[List[Dict[str, Any]]], List[Dict[str, Any]]]
    reset: Callable[..., None]
    state_dict: Callable[[], Dict[str, Any]]
    load_state_dict: Callable[[Dict[str, Any]], None]
    get_attribute: Callable[[str], Any]
    set_attribute: Callable[[str, Any], None]
    collect_kwargs: Callable[..., Dict[str, Any]]


class EvalMode(NamedTuple):
    """What the evaluator may call: ``forward({env_id: obs}) -> {env_id: output}`` and the state methods."""

    forward: Callable[[Dict[int, Any]], Dict[int, Any]]
    reset: Callable[..., None]
    state_dict: Callable[[], Dict[str, Any]]
    load_state_dict: Callable[[Dict[str, Any]], None]
    get_attribute: Callable[[str], Any]
    set_attribute: Callable[[str, Any], None]


class Policy(ABC):
    """Base class. Subclasses set ``config`` (merged over their parents') and implement the modes."""

    _optimizer: torch.optim.Optimizer  # set by an algorithm's _init_learn (the base state methods save it)
    result: Dict[str, Any]  # the summary of the run that trained this policy (set by the entries)
    #: where ``stride -m tune`` searches: dotted keys of ``config`` -> ranges (``stride.config.search``);
    #: an algorithm declares its own next to its defaults (none: the policy cannot be tuned)
    search_space: ClassVar[SearchSpace] = {}

    config: Dict[str, Any] = dict(
        # (str) registered policy name.
        type=REQUIRED,
        # (bool) train on CUDA when available (falls back to CPU); a policy built without its learn mode (a
        # -m parallel collector, an evaluator) acts on the CPU from the weights the learner publishes.
        cuda=False,
        # (bool) on-policy algorithms train on fresh data only and use no replay buffer.
        on_policy=REQUIRED,
        # (bool) prioritized replay: the learner returns 'priority' per sample.
        priority=False,
        # (bool) weight the loss by importance-sampling weights (needs priority=True).
        priority_IS_weight=False,
        # (int) transitions collected with uniformly random actions before training starts.
        random_collect_size=Setting(0, "[0, inf)"),
        # (bool) normalise observations with running mean/var (stride.model.common.normalize.RunningNorm):
        # updated by collect forwards only, applied to collect, eval and learn; saved in the model's state_dict.
        obs_norm=False,
        # (float) normalised observations are clipped to [-obs_norm_clip, obs_norm_clip].
        obs_norm_clip=Setting(10.0, "(0, inf)"),
        # model keyword arguments (validated against the model class's signature).
        model=dict(),
        learn=dict(
            # (bool) data-parallel learner replicas, one process each (torchrun, or a pipeline that
            # starts them): weights broadcast from rank 0 at start, gradients averaged every step.
            multi_gpu=False,
        ),
        collect=dict(),
        eval=dict(),
        other=dict(),
    )

    @classmethod
    def declared_config(cls) -> Dict[str, object]:
        """This class's ``config`` merged over every parent's, with the valid values of each key
        (:class:`~stride.config.Setting`): what ``compile_config`` validates a user's config against."""
        merged: Dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            if "config" in klass.__dict__:
                merged = deep_update(merged, klass.__dict__["config"])
        return copy.deepcopy(merged)

    @classmethod
    def default_config(cls) -> Config:
        """The default values (this class's ``config`` merged over every parent's)."""
        return Config(plain(cls.declared_config()))

    @classmethod
    def default_model(cls) -> Tuple[str, Dict[str, object]]:
        """``(registered model name, kwargs)`` used when no model is passed."""
        raise NotImplementedError(f"{cls.__name__} has no default model; pass one")

    def __init__(self, cfg: Mapping[str, object], model: Optional[nn.Module] = None, enable_field: Optional[Sequence[str]] = None) -> None:
        self._cfg = cfg if isinstance(cfg, Config) else Config(cfg)
        fields = list(enable_field) if enable_field is not None else ["learn", "collect", "eval"]
        unknown = set(fields) - {"learn", "collect", "eval"}
        if unknown:
            raise ValueError(f"unknown policy field(s) {sorted(unknown)}; valid choices: collect, eval, learn")
        self._enable_field = fields
        # CUDA serves learning: a policy without a learn mode (a collector's, an evaluator's, a frozen league
        # player's) acts on the CPU from the weights a GPU learner publishes (its state dicts come on the CPU)
        cuda = bool(self._cfg.get("cuda")) and "learn" in fields and torch.cuda.is_available()
        self._device = torch.device("cuda" if cuda else "cpu")
        model = model if model is not None else self._create_model()
        self._obs_norm = self._attach_obs_norm(model) if self._cfg.get("obs_norm") else None
        self._model = model.to(self._device)
        self._multi_gpu = "learn" in fields and bool(self._cfg.learn.multi_gpu)
        if self._multi_gpu:  # before any mode copies the weights (target networks): all replicas start equal
            if not in_process_group():
                raise ConfigError(f"policy.learn.multi_gpu=True needs a torch.distributed process group: {LAUNCH_HINT}")
            broadcast_module(self._model)
        # continuous actions leave in the env's units (policy.action_range, filled by compile_config)
        self._action_scale = ActionScale.from_config(self._cfg.get("action_range"), self._cfg.get("model", {}).get("action_shape"))
        # the scheduled hyper-parameters (numbers are constant schedules), before any mode reads one
        self._schedules = Schedules.from_config(self.declared_config(), self._cfg)
        for field in fields:
            getattr(self, f"_init_{field}")()
        self._learn_view = self._make_learn_mode()
        self._collect_view = self._make_collect_mode()
        self._eval_view = self._make_eval_mode()

    def _create_model(self) -> nn.Module:
        name, extra = self.default_model()
        kwargs = {**extra, **dict(self._cfg.get("model", {}))}
        kwargs.pop("type", None)
        model: nn.Module = MODEL_REGISTRY.get(self._cfg.get("model", {}).get("type", name))(**kwargs)
        return model

    def _attach_obs_norm(self, model: nn.Module) -> RunningNorm:
        """The model's ``obs_norm`` submodule (added when missing): its statistics are buffers of
        the model, so every state dict and checkpoint that holds the model holds them."""
        existing = getattr(model, "obs_norm", None)
        if isinstance(existing, RunningNorm):
            return existing
        shape = self._cfg.get("model", {}).get("obs_shape")
        if not (isinstance(shape, int) or (isinstance(shape, (list, tuple)) and all(isinstance(s, int) for s in shape))):
            raise ConfigError(f"policy.obs_norm needs policy.model.obs_shape to be an int or a list of ints "
                              f"(a Box observation), got {shape!r}")
        norm = RunningNorm(shape, clip=float(self._cfg.obs_norm_clip))
        model.add_module("obs_norm", norm)
        return norm

    def _norm_obs(self, obs: torch.Tensor) -> torch.Tensor:
        """``obs`` normalised with the running statistics (unchanged without ``obs_norm``)."""
        return obs if self._obs_norm is None else self._obs_norm.normalize(obs)

    def _forward_collect_observed(self, data: Dict[int, Any], **kwargs: Any) -> Dict[int, Any]:
        """The collect forward with ``obs_norm``: the observations update the running statistics
        first (only here: eval and learn forwards never move them), then the algorithm's forward."""
        norm = self._obs_norm
        if norm is not None and data:
            norm.update(torch.from_numpy(np.asarray(list(data.values()))))
        return self._forward_collect(data, **kwargs)

    # ---- the three modes ---------------------------------------------------------------------
    # The mode views are built once, in __init__: the loops read ``policy.collect_mode`` every iteration.
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

    def _make_learn_mode(self) -> LearnMode:
        return LearnMode(self._forward_learn_counted, self._reset_learn, self._monitor_vars_learn, self._learn_state,
                         self._load_learn_state, self._get_attribute, self._set_attribute)

    def _make_collect_mode(self) -> CollectMode:
        forward = self._forward_collect if self._obs_norm is None else self._forward_collect_observed
        return CollectMode(forward, self._process_transition, self._get_train_sample, self._reset_collect,
                           self._collect_state, self._load_state_dict_collect, self._get_attribute,
                           self._set_attribute, self._collect_kwargs)

    def _make_eval_mode(self) -> EvalMode:
        return EvalMode(self._forward_eval, self._reset_eval, self._eval_state, self._load_state_dict_eval,
                        self._get_attribute, self._set_attribute)

    def _collect_state(self) -> Dict[str, Any]:
        """The collect state on the CPU: what a learner publishes to collectors, which act on the CPU
        whatever device it trains on (from a GPU: copied, with one wait; on the CPU: as it is)."""
        return self._on_cpu(self._state_dict_collect())

    def _eval_state(self) -> Dict[str, Any]:
        """The eval state on the CPU (as :meth:`_collect_state`)."""
        return self._on_cpu(self._state_dict_eval())

    def _on_cpu(self, state: Dict[str, Any]) -> Dict[str, Any]:
        return state if self._device.type == "cpu" else cast(Dict[str, Any], to_device(state, "cpu"))

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

    def _reset_learn(self, data_id: Optional[List[int]] = None) -> None:
        pass

    def _forward_learn_counted(self, data: Any) -> Dict[str, Any]:
        """One learn step; then the ``train_iter`` counter of the schedules moves on (a step's
        hyper-parameters are those of the iterations done before it, as an LR scheduler's)."""
        out = self._forward_learn(data)
        self._schedules.counters["train_iter"] += 1
        return out

    def _learn_state(self) -> Dict[str, Any]:
        return {**self._state_dict_learn(), "schedule_counters": self._schedules.state_dict()}

    def _load_learn_state(self, state_dict: Dict[str, Any]) -> None:
        self._load_state_dict_learn(state_dict)
        if "schedule_counters" in state_dict:
            self._schedules.load_state_dict(state_dict["schedule_counters"])

    def _hp(self, key: str, env_step: Optional[int] = None, train_iter: Optional[int] = None) -> float:
        """The current value of the hyper-parameter at the dotted config ``key`` (``'learn.clip_ratio'``):
        the one way an algorithm reads a scheduled key, so a number and a schedule read alike.
        ``env_step`` / ``train_iter``: evaluate at these counters instead (collect mode passes the
        collector's)."""
        return self._schedules.value(key, env_step, train_iter)

    def _set_lr(self, optimizer: torch.optim.Optimizer, key: str = "learn.learning_rate") -> float:
        """Write the current value of ``key`` into every parameter group of ``optimizer``; returns it."""
        lr = self._hp(key)
        for group in optimizer.param_groups:
            group["lr"] = lr
        return lr

    def _set_envstep(self, envstep: int) -> None:
        """The learner tells the env steps collected so far (``learn_mode.set_attribute('envstep', n)``):
        the counter of learn-side schedules with ``unit='env_step'``."""
        self._schedules.counters["env_step"] = int(envstep)

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
        nstep = self._cfg.get("nstep", 1)
        if nstep == 1:
            return transitions
        return get_nstep_return_data(transitions, nstep, self._cfg.discount_factor)

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

    def _state_dict_eval(self) -> Dict[str, Any]:
        return {"model": self._model.state_dict()}

    def _load_state_dict_eval(self, state_dict: Dict[str, Any]) -> None:
        self._model.load_state_dict(state_dict["model"])

    # ---- attributes the workers read ---------------------------------------------------------
    def _get_attribute(self, name: str) -> Any:
        getter = getattr(self, f"_get_{name}", None)
        if getter is not None:
            return getter()
        if hasattr(self, f"_{name}"):
            return getattr(self, f"_{name}")
        raise AttributeError(f"policy {type(self).__name__} has no attribute '{name}'")

    def _set_attribute(self, name: str, value: Any) -> None:
        setter = getattr(self, f"_set_{name}", None)
        if setter is not None:
            setter(value)
            return
        setattr(self, f"_{name}", value)

    def _get_collect_episode_state(self) -> Optional[Dict[str, Any]]:
        """What the collect mode carries from one ``forward`` to the next inside episodes (a
        recurrent policy's per-env states), as plain values for a checkpoint; None: nothing."""
        return None

    def _get_n_sample(self) -> Optional[int]:
        n = self._cfg.collect.get("n_sample")
        return None if n is None else int(n)

    def _get_n_episode(self) -> Optional[int]:
        n = self._cfg.collect.get("n_episode")
        return None if n is None else int(n)

    def _get_on_policy(self) -> bool:
        return bool(self._cfg.on_policy)

    def _get_priority(self) -> bool:
        return bool(self._cfg.priority)

    def _get_batch_size(self) -> int:
        return int(self._cfg.learn.batch_size)

    def _get_unroll_len(self) -> int:
        """Transitions per train sample (``policy.collect.unroll_len``; 1: a sample is a transition)."""
        return int(self._cfg.collect.get("unroll_len", 1))

    def _get_lookahead(self) -> int:
        """Transitions a mid-episode segment must keep for the next one (n-step windows)."""
        return int(self._cfg.get("nstep", 1)) - 1

    # ---- learner replicas --------------------------------------------------------------------
    def sync_gradients(self, model: Union[nn.Module, Iterable[torch.Tensor]]) -> None:
        """Average the gradients of ``model`` (a module or its parameters) across the learner
        replicas, in place; a no-op in a single process. Called between backward and the optimizer
        step (``_optimise`` does when ``policy.learn.multi_gpu``), so every replica steps with the
        gradient of the union of their batches. See :func:`stride.torch_utils.dist.allreduce_gradients`
        (one bucket per dtype; parameters only some replicas touched averaged over those). Better
        than DI-engine on purpose: one collective per dtype instead of two per parameter (about 10x
        less time per step for the zoo's DQN models, ``benchmarks/allreduce``), and statistics taken
        from a batch (advantage normalisation, return statistics) come from the union of the
        replicas' batches (:meth:`_moments`), so replicas equal one learner on the whole batch."""
        allreduce_gradients(model.parameters() if isinstance(model, nn.Module) else model)

    def _optimise(self, optimizer: torch.optim.Optimizer, loss: torch.Tensor,
                  grad_clip_norm: Optional[float] = None) -> Optional[torch.Tensor]:
        """One step of ``optimizer`` on ``loss`` -- the one place every algorithm steps: gradients of
        the optimizer's own parameters only (another network's ``.grad`` is left alone), averaged
        over replicas (``multi_gpu``) *before* the norm clip, so all replicas clip the same global
        gradient and stay identical. Returns the pre-clip gradient norm when ``grad_clip_norm``."""
        params = [p for group in optimizer.param_groups for p in group["params"]]
        for p, g in zip(params, torch.autograd.grad(loss, params, allow_unused=True)):
            p.grad = g
        if self._multi_gpu:
            self.sync_gradients(params)
        norm = None if grad_clip_norm is None else torch.nn.utils.clip_grad_norm_(params, grad_clip_norm)
        step(optimizer)
        return norm

    def _moments(self, x: torch.Tensor) -> Moments:
        """(count, mean, biased variance) of ``x``: over all replicas' ``x`` with ``multi_gpu`` (the
        statistics of the union of their batches, as one learner would take them), else ``x``'s own."""
        return moments(x) if self._multi_gpu else local_moments(x)

    def _standardize(self, x: torch.Tensor) -> torch.Tensor:
        """``(x - mean) / (std + 1e-8)`` with the (unbiased) statistics of :meth:`_moments`; ``x``
        unchanged when they cover fewer than 2 elements. Every replica calls it alike (its
        collectives must pair up), whatever the size of its own ``x``."""
        n, mean, var = self._moments(x)
        if n < 2:
            return x
        return (x - mean) / ((var * (n / (n - 1))).sqrt() + 1e-8)

    # ---- helpers shared by algorithms -----------------------------------------------------------
    def _set_mode(self, training: bool) -> None:
        """Train/eval mode, switched only when it changes. ``nn.Module.train()`` walks every
        submodule recursively (~50 us for a small MLP, twice per collect cycle); when no module
        overrides ``train`` each module's public ``training`` flag is set from a cached list, which
        is what it would do."""
        model = self._model
        if model.training == training:
            return
        mods = self.__dict__.get("_mode_modules")
        if mods is None:
            mods = list(model.modules())
            if any(type(m).train is not nn.Module.train for m in mods):
                mods = ()  # someone customised train(): always go through it
            self._mode_modules = mods
        if mods:
            for m in mods:
                m.training = training
        else:
            model.train(training)

    def _batch(self, data: Any) -> Dict[str, torch.Tensor]:
        """A learn batch as tensors on the policy's device: a list of sample dicts (the seeds' form)
        is collated; a dict of columns (the replay buffer's batched path) is converted in place."""
        columns: Nested
        if isinstance(data, list):
            columns = default_collate(data)
        else:
            columns = {k: to_tensor(v) for k, v in data.items()
                       if not isinstance(v, (list, str)) or k == "IS"}
        if not isinstance(columns, dict):
            raise TypeError(f"a learn batch is a list of dict samples or a dict of columns, not {type(data).__name__}")
        # what each algorithm reads are tensors (a dict observation: a dict of them), moved once: pinned,
        # non-blocking, in their stored dtypes (uint8 frames become float inside the model, on the device)
        batch = cast(Dict[str, torch.Tensor], columns)
        if self._device.type != "cpu":
            batch = cast(Dict[str, torch.Tensor], to_device(batch, self._device))
        if self._obs_norm is not None:  # stored raw; learnt from with the statistics the collector has now
            for key in ("obs", "next_obs"):
                if isinstance(batch.get(key), torch.Tensor):
                    batch[key] = self._obs_norm.normalize(batch[key])
        return batch

    def _act(self, model: Any, data: Dict[int, Any], to_env: bool = False, **kwargs: Any) -> Dict[int, Any]:
        """One batched forward of a sampling wrapper: ``{env_id: obs}`` -> ``{env_id: {'action': ...}}``;
        ``to_env``: the wrapper's actions are squashed into [-1, 1] and leave in the env's units."""
        ids, obs = self._obs_batch(data)
        self._set_mode(False)
        with torch.inference_mode():  # only NumPy actions leave: no autograd bookkeeping at all (~5% of a step)
            action = model.forward(obs, **kwargs)["action"].cpu().numpy()
        if to_env:
            action = self._action_scale.to_env(action)
        return {env_id: {"action": a} for env_id, a in zip(ids, action)}

    def _obs_batch(self, data: Dict[int, Any]) -> Tuple[List[int], torch.Tensor | Dict[str, torch.Tensor]]:
        """``{env_id: obs}`` -> (ids, stacked obs tensor on device)."""
        ids = list(data.keys())
        values = list(data.values())
        if isinstance(values[0], dict):
            stacked = {k: torch.as_tensor(np.stack([v[k] for v in values])) for k in values[0]}
            return ids, {k: (v.float() if v.dtype == torch.float64 else v).to(self._device) for k, v in stacked.items()}
        else:
            try:
                arr = np.array(values)  # one call; np.stack is 4x slower on a handful of small arrays
            except ValueError:
                arr = np.stack(values)  # ragged: np.stack names the mismatching shapes
            obs = torch.from_numpy(arr)
            if obs.dtype == torch.float64:
                obs = obs.float()
            if self._device.type != "cpu":
                obs = obs.to(self._device)
            if self._obs_norm is not None:
                obs = self._obs_norm.normalize(obs)
        return ids, obs

    def __repr__(self) -> str:
        return f"{type(self).__name__}(fields={self._enable_field}, device={self._device})"
