"""The three contracts a worker holds of a policy: ``LearnMode``, ``CollectMode``, ``EvalMode``.

Each is a ``typing.Protocol``: typed methods (``forward``, ``reset``, the state methods...) and
typed properties for what the workers read (``n_sample``, ``unroll_len``, ``on_policy``...), so
mypy and a reader follow a call from the learner or a collector into an algorithm. A worker can
only call what its mode exposes. ``PolicyLearnMode`` / ``PolicyCollectMode`` / ``PolicyEvalMode``
are the modes a :class:`~stride.policy.Policy` builds from its own methods; anything else with the
same members is a mode too (``random_collect_mode``, the expert of ``collect_demo``).
DI-engine's modes are namedtuples of untyped callables plus a ``get_attribute(name)`` string
channel; here every name a worker reads is a declared, typed property.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, cast, runtime_checkable

import torch

from ..rl_utils.schedule import Schedules
from ..torch_utils import to_device
from ..utils.data import Nested
from ..utils.narrow import as_mapping
from .views import PolicyConfig

#: a mode's state: named parts (weights, optimizer states, counters...), each as its owner saves it
StateDict = Dict[str, object]
#: a transition or a train sample: named columns (``obs``, ``action``, ``reward``...)
Sample = Dict[str, object]


class ResetFn(Protocol):
    """A mode's ``reset``: forget the per-env state of ``data_id`` (None: of every env)."""

    def __call__(self, data_id: Optional[List[int]] = None) -> None: ...


class CollectKwargsFn(Protocol):
    """A collect mode's ``collect_kwargs``: ``forward``'s keyword arguments at these counters."""

    def __call__(self, envstep: int = 0, train_iter: int = 0) -> Dict[str, object]: ...


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


@runtime_checkable
class EvalMode(Protocol):
    """What the evaluator may call: ``forward({env_id: obs}) -> {env_id: output}`` and the state methods."""

    def forward(self, data: Dict[int, Any]) -> Dict[int, Any]:
        """One action per env (``{'action': ...}``), greedy."""

    def reset(self, data_id: Optional[List[int]] = None) -> None:
        """Forget the per-env state of ``data_id`` (None: of every env)."""

    def state_dict(self) -> StateDict:
        """The weights acting needs, on the CPU."""

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Act with these weights from now on."""


class EpisodeState(Protocol):
    """What a collect mode carries from one ``forward`` to the next inside episodes (a recurrent
    policy's per-env states), saved with a collector's checkpoint."""

    def episode_state(self) -> Optional[StateDict]:
        """That state as plain values for a checkpoint; None: nothing."""

    def load_episode_state(self, state: StateDict) -> None:
        """Go on inside the episodes ``state`` (from :meth:`episode_state`) was taken in."""


@runtime_checkable
class CollectSettings(EpisodeState, Protocol):
    """What a collector reads of its collect mode besides calling it."""

    @property
    def n_sample(self) -> Optional[int]:
        """Train samples per ``collect`` call (``policy.collect.n_sample``), or None."""

    @property
    def n_episode(self) -> Optional[int]:
        """Episodes per ``collect`` call (``policy.collect.n_episode``), or None."""

    @property
    def on_policy(self) -> bool:
        """Whether the samples train once, fresh (no replay)."""

    @property
    def unroll_len(self) -> int:
        """Transitions per train sample (1: a sample is a transition); segments are cut at multiples of it."""

    @property
    def lookahead(self) -> int:
        """Transitions a mid-episode segment must keep for the next one (n-step windows, burn-in)."""


@runtime_checkable
class CollectMode(CollectSettings, Protocol):
    """What a collector may call: ``forward({env_id: obs}, **collect_kwargs) -> {env_id: output}``,
    ``process_transition``, ``get_train_sample``, the state methods, and its settings."""

    def forward(self, data: Dict[int, Any], **kwargs: Any) -> Dict[int, Any]:
        """One action per env (``{'action': ...}`` and whatever the transitions need)."""

    def process_transition(self, obs: object, policy_output: Dict[str, object], timestep: object) -> Sample:
        """The stored transition of one env step."""

    def get_train_sample(self, transitions: List[Sample]) -> List[Sample]:
        """One env's transitions -> train samples (n-step, sequences, advantages...)."""

    def reset(self, data_id: Optional[List[int]] = None) -> None:
        """Forget the per-env state of ``data_id`` (None: of every env)."""

    def collect_kwargs(self, envstep: int = 0, train_iter: int = 0) -> Dict[str, object]:
        """Keyword arguments for ``forward`` at this point of training (e.g. ``eps``)."""

    def state_dict(self) -> StateDict:
        """The weights (and statistics) acting needs, on the CPU: what a learner publishes."""

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Act with these weights from now on."""


@runtime_checkable
class LearnMode(Protocol):
    """What the learner may call: ``forward(batch) -> {name: scalar}`` and the state methods. A scalar
    is a number or a detached one-element tensor on the policy's device: the learner's log hook reads
    tensors only when it writes (a GPU step then never waits for its kernels); ``priority``, when
    there, is a NumPy array (the buffer needs it now)."""

    def forward(self, data: object) -> Dict[str, object]:
        """One optimisation step on a batch (a list of samples or a dict of columns); its log."""

    def reset(self, data_id: Optional[List[int]] = None) -> None:
        """Nothing in a learn step is per env; here for the seeds' interface."""

    def monitor_vars(self) -> List[str]:
        """The names ``forward`` logs."""

    def state_dict(self) -> StateDict:
        """Everything training needs to resume: weights, optimizers, schedule counters."""

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Resume from :meth:`state_dict`."""

    def set_envstep(self, envstep: int) -> None:
        """The env steps collected so far: the counter of schedules with ``unit='env_step'``."""

    @property
    def priority(self) -> bool:
        """Whether ``forward`` returns a ``priority`` per sample (prioritized replay)."""

    @property
    def batch_size(self) -> Optional[int]:
        """Samples per learn step (``policy.learn.batch_size``); None: one collect's samples, whole (A2C)."""


class PolicySettings:
    """What the workers read of a policy, from its typed config; an algorithm whose samples are cut
    otherwise (R2D2's sequences) subclasses it (``Policy.settings``)."""

    def __init__(self, cfg: PolicyConfig) -> None:
        self._cfg = cfg

    @property
    def n_sample(self) -> Optional[int]:
        return self._cfg.collect.n_sample

    @property
    def n_episode(self) -> Optional[int]:
        return self._cfg.collect.n_episode

    @property
    def on_policy(self) -> bool:
        return self._cfg.on_policy

    @property
    def priority(self) -> bool:
        return self._cfg.priority

    @property
    def batch_size(self) -> Optional[int]:
        return self._cfg.learn.batch_size

    @property
    def unroll_len(self) -> int:
        """``policy.collect.unroll_len`` (1: a sample is a transition)."""
        return self._cfg.collect.unroll_len

    @property
    def lookahead(self) -> int:
        """The rows an n-step window needs past a sample (``policy.nstep`` - 1)."""
        return self._cfg.nstep - 1


def on_cpu(state: StateDict, device: torch.device) -> StateDict:
    """A state dict taken on ``device``, on the CPU (from a GPU: copied, with one wait; on the CPU: as it is)."""
    return state if device.type == "cpu" else cast(StateDict, to_device(cast(Nested, state), "cpu"))


class PolicyEvalMode:
    """A policy's ``EvalMode``: its eval forward and reset; its model's weights."""

    def __init__(self, forward: Callable[[Dict[int, Any]], Dict[int, Any]], reset: ResetFn,
                 model: torch.nn.Module, device: torch.device) -> None:
        self.forward, self.reset = forward, reset
        self._model, self._device = model, device

    def state_dict(self) -> StateDict:
        return {"model": on_cpu(self._model.state_dict(), self._device)}

    def load_state_dict(self, state_dict: StateDict) -> None:
        self._model.load_state_dict(as_mapping(state_dict["model"], "an eval state's 'model'"))


class PolicyCollectMode:
    """A ``CollectMode`` from its parts: the calls (a policy's methods, or another mode's), the
    settings (a :class:`PolicySettings`, or another collect mode), what it carries inside episodes
    (``episodes``; None: nothing) and the device the state is on."""

    def __init__(self, *, forward: Callable[..., Dict[int, Any]],
                 process_transition: Callable[[object, Dict[str, object], object], Sample],
                 get_train_sample: Callable[[List[Sample]], List[Sample]],
                 reset: ResetFn, collect_kwargs: CollectKwargsFn,
                 state_dict: Callable[[], StateDict], load_state_dict: Callable[[StateDict], None],
                 episodes: Optional[EpisodeState], settings: PolicySettings | CollectSettings,
                 device: torch.device = torch.device("cpu")) -> None:
        # the calls are the given callables themselves (no extra frame on the collector's hot path)
        self.forward, self.process_transition, self.get_train_sample = forward, process_transition, get_train_sample
        self.reset, self.collect_kwargs, self.load_state_dict = reset, collect_kwargs, load_state_dict
        self._state_dict, self._episodes, self._settings, self._device = state_dict, episodes, settings, device

    def state_dict(self) -> StateDict:
        """The collect state on the CPU: what a learner publishes to collectors, which act on the CPU
        whatever device it trains on."""
        return on_cpu(self._state_dict(), self._device)

    def episode_state(self) -> Optional[StateDict]:
        return None if self._episodes is None else self._episodes.episode_state()

    def load_episode_state(self, state: StateDict) -> None:
        if self._episodes is None:
            raise ValueError(f"this collect mode keeps no episode state; got one with keys {sorted(state)}")
        self._episodes.load_episode_state(state)

    @property
    def n_sample(self) -> Optional[int]:
        return self._settings.n_sample

    @property
    def n_episode(self) -> Optional[int]:
        return self._settings.n_episode

    @property
    def on_policy(self) -> bool:
        return self._settings.on_policy

    @property
    def unroll_len(self) -> int:
        return self._settings.unroll_len

    @property
    def lookahead(self) -> int:
        return self._settings.lookahead


class PolicyLearnMode:
    """A policy's ``LearnMode``: its learn step and state, and the schedule counters they move
    (a step's hyper-parameters are those of the iterations done before it, as an LR scheduler's;
    the counters are saved with the state, so a resumed run goes on where it stopped)."""

    def __init__(self, forward: Callable[[object], Dict[str, object]], monitor_vars: Callable[[], List[str]],
                 state_dict: Callable[[], StateDict], load_state_dict: Callable[[StateDict], None],
                 schedules: Schedules, settings: PolicySettings) -> None:
        self._forward, self.monitor_vars = forward, monitor_vars
        self._state_dict, self._load_state_dict = state_dict, load_state_dict
        self._schedules, self._settings = schedules, settings

    def forward(self, data: object) -> Dict[str, object]:
        out = self._forward(data)
        self._schedules.counters["train_iter"] += 1
        return out

    def reset(self, data_id: Optional[List[int]] = None) -> None:
        """Nothing: a learn step keeps no per-env state."""

    def state_dict(self) -> StateDict:
        return {**self._state_dict(), "schedule_counters": self._schedules.state_dict()}

    def load_state_dict(self, state_dict: StateDict) -> None:
        self._load_state_dict(state_dict)
        if "schedule_counters" in state_dict:
            self._schedules.load_state_dict(cast(Mapping[str, int], state_dict["schedule_counters"]))

    def set_envstep(self, envstep: int) -> None:
        self._schedules.counters["env_step"] = int(envstep)

    @property
    def priority(self) -> bool:
        return self._settings.priority

    @property
    def batch_size(self) -> Optional[int]:
        return self._settings.batch_size
