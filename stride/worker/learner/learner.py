"""``BaseLearner``: one call to ``train(batch)`` is one optimisation step of the policy.

Checkpoints hold only tensors and plain Python values -- the policy's learn state, counters,
the global RNG states and any registered component's state (collector envs, replay buffer) --
are written atomically (temp file + rename) and loaded with ``weights_only=True``, so a run
resumes exactly where it stopped and loading a checkpoint never runs code.
"""

from __future__ import annotations

import os
import pickle
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

import torch

from ...config.config import Configurable
from ...config.view import ConfigView, setting, subsection
from ...utils.errors import StrideError
from ...utils.files import atomic_write, atomic_write_text
from ...utils.log import build_logger
from ...utils.registry import LEARNER_REGISTRY
from ...utils.narrow import as_int, as_mapping
from ...utils.seed import get_rng_state, read_rng_state, set_rng_state
from ...policy.modes import LearnMode
from ..protocols import ScalarWriter, Stateful
from .hooks import POSITIONS, LearnerHook, LoadCkptHook, LogFlushHook, LogShowHook, SaveCkptHook, ckpt_dir

CKPT_FORMAT = 1

#: what ``train`` takes: a list of sample dicts (the seeds' form) or a dict of columns (the replay buffer's)
Batch = Union[Sequence[Mapping[str, object]], Mapping[str, object]]


def read_checkpoint(path: str) -> Dict[str, object]:
    """A checkpoint file's contents, loaded with ``weights_only`` (no code runs). Anything else --
    missing, truncated, not a checkpoint, or holding objects a safe load refuses -- is one line
    that says which; it never suggests loading unsafely (torch's own message does)."""
    if not os.path.isfile(path):
        raise StrideError(f"checkpoint '{path}' does not exist")
    try:
        with warnings.catch_warnings():  # torch warns about foreign pickle protocols on stderr
            warnings.simplefilter("ignore")
            state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise StrideError(f"checkpoint '{path}' holds objects a safe load refuses (not a checkpoint Stride wrote; "
                          "loading it could run code), refused") from None
    except Exception as e:  # a truncated zip (RuntimeError), an empty file (EOFError), text (KeyError) ...
        raise StrideError(f"checkpoint '{path}' is truncated or not a checkpoint file ({type(e).__name__})") from None
    if not isinstance(state, dict) or "policy" not in state or "train_iter" not in state:
        raise StrideError(f"checkpoint '{path}' is not a Stride checkpoint (no policy state and train_iter in it)")
    return state


@dataclass(frozen=True)
class LearnerHookConfig(ConfigView):
    """``policy.learn.learner.hook``: the learner's built-in hooks."""

    #: (str) checkpoint to load before the run ('' = none).
    load_ckpt_before_run: str = ""
    #: (int) log averaged learner variables every this many iterations.
    log_show_after_iter: int = setting(100, "[1, inf)")
    #: (int) save a checkpoint every this many iterations.
    save_ckpt_after_iter: int = setting(10000, "[1, inf)")
    #: (bool) save a checkpoint when the run ends.
    save_ckpt_after_run: bool = True


@dataclass(frozen=True)
class LearnerConfig(ConfigView):
    """``policy.learn.learner``: what :class:`BaseLearner` reads."""

    #: (int) iterations of ``start()`` (parallel mode).
    train_iterations: int = setting(int(1e10), "[1, inf)")
    hook: LearnerHookConfig = subsection(LearnerHookConfig)


@LEARNER_REGISTRY.register("base")
class BaseLearner(Configurable):
    """Train a policy's learn mode, with hooks, logs and checkpoints."""

    config_view = LearnerConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None, policy: Optional[LearnMode] = None,
                 tb_logger: Optional[ScalarWriter] = None,
                 exp_name: Optional[str] = None, instance_name: str = "learner") -> None:
        self._cfg = self.typed_config(LearnerConfig, cfg, prefix="policy.learn.learner.")
        self._policy = policy
        self._exp_name = exp_name
        self.tb_logger: Optional[ScalarWriter] = tb_logger
        self.logger = build_logger(exp_name, instance_name)
        self._train_iter = 0
        self._envstep = 0
        self.log_buffer: Dict[str, Any] = {}
        self.last_log: Dict[str, float] = {}
        self._priority: object = None
        self._hooks: Dict[str, List[LearnerHook]] = {p: [] for p in POSITIONS}
        self._states: Dict[str, Stateful] = {}
        hook = self._cfg.hook
        self.register_hook(LoadCkptHook(hook.load_ckpt_before_run))
        log_hook = LogShowHook(hook.log_show_after_iter)
        self.register_hook(log_hook)
        self.register_hook(LogFlushHook(log_hook))
        if exp_name:
            self.register_hook(SaveCkptHook("save_ckpt_iter", "after_iter", priority=40, freq=hook.save_ckpt_after_iter))
            if hook.save_ckpt_after_run:
                self.register_hook(SaveCkptHook("save_ckpt_run", "after_run", priority=40))

    # ---- hooks -------------------------------------------------------------------------------
    def register_hook(self, hook: LearnerHook) -> None:
        """Add a hook at its position (sorted by priority, stable)."""
        hooks = self._hooks[hook.position]
        hooks.append(hook)
        hooks.sort(key=lambda h: h.priority)

    def call_hook(self, position: str) -> None:
        if position not in self._hooks:
            raise ValueError(f"unknown hook position '{position}'; valid choices: {', '.join(POSITIONS)}")
        for hook in self._hooks[position]:
            hook(self)

    # ---- training ----------------------------------------------------------------------------
    def train(self, data: Batch, envstep: Optional[int] = None) -> Dict[str, object]:
        """One optimisation step on ``data`` (a list of samples or a dict of columns); returns the policy's
        log, whose scalars may be one-element tensors on its device (``float()`` one and the host waits
        for the GPU; ``last_log`` holds the log hook's averages as numbers)."""
        if envstep is not None:
            self._envstep = envstep
            self.policy.set_envstep(envstep)  # the counter of env-step schedules
        hooks = self._hooks
        for hook in hooks["before_iter"]:
            hook(self)
        log = self.policy.forward(data)
        self._priority = log.pop("priority", None)
        self.log_buffer = log
        self._train_iter += 1
        for hook in hooks["after_iter"]:
            hook(self)
        return log

    def start(self, get_data: Callable[[], Batch], envstep_fn: Optional[Callable[[], int]] = None) -> None:
        """Parallel mode: ``before_run``, ``train_iterations`` steps on ``get_data()``, ``after_run``."""
        self.call_hook("before_run")
        for _ in range(self._cfg.train_iterations):
            self.train(get_data(), envstep_fn() if envstep_fn else None)
        self.call_hook("after_run")

    # ---- state -------------------------------------------------------------------------------
    @property
    def train_iter(self) -> int:
        return self._train_iter

    @property
    def last_iter(self) -> int:
        return self._train_iter

    @property
    def envstep(self) -> int:
        return self._envstep

    @property
    def collector_envstep(self) -> int:
        return self._envstep

    @collector_envstep.setter
    def collector_envstep(self, value: int) -> None:
        self._envstep = int(value)

    @property
    def priority(self) -> object:
        """The last step's new priorities (one per batch row; None if the policy gave none): the loop
        hands them to the buffer with the batch's ticket (``buffer.update(ticket, learner.priority)``)."""
        return self._priority

    @property
    def policy(self) -> LearnMode:
        """The learn mode this learner trains."""
        if self._policy is None:
            raise StrideError("BaseLearner has no policy: give its learn mode to the constructor")
        return self._policy

    def register_state(self, name: str, component: Stateful) -> None:
        """Include ``component.state_dict()`` in checkpoints (restored by ``load_state_dict``)."""
        self._states[name] = component

    # ---- checkpoints -------------------------------------------------------------------------
    def save_checkpoint(self, ckpt_name: Optional[str] = None) -> Optional[str]:
        """Write ``<exp>/ckpt/<ckpt_name or iteration_<n>.pth.tar>`` atomically; returns its path."""
        if not self._exp_name:
            return None
        folder = ckpt_dir(self._exp_name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, ckpt_name or f"iteration_{self._train_iter}.pth.tar")
        state = {
            "format": CKPT_FORMAT,
            "policy": self.policy.state_dict(),
            "train_iter": self._train_iter,
            "envstep": self._envstep,
            "rng": get_rng_state(),
            "components": {name: comp.state_dict() for name, comp in self._states.items()},
        }
        atomic_write(path, lambda f: torch.save(state, f), binary=True)
        if ckpt_name is None or ckpt_name != "ckpt_best.pth.tar":
            atomic_write_text(os.path.join(folder, "ckpt_latest.txt"), os.path.basename(path) + "\n")
        return path

    def load_checkpoint(self, path: str) -> None:
        """Restore the policy, counters, RNG states and registered components from ``path``."""
        state = read_checkpoint(path)
        self.policy.load_state_dict(dict(as_mapping(state["policy"], "checkpoint 'policy'")))
        self._train_iter = as_int(state["train_iter"], "checkpoint 'train_iter'")
        self._envstep = as_int(state["envstep"], "checkpoint 'envstep'")
        components = as_mapping(state.get("components", {}), "checkpoint 'components'")
        for name, comp in self._states.items():
            if name in components:
                comp.load_state_dict(as_mapping(components[name], f"checkpoint 'components.{name}'"))
        if "rng" in state:
            set_rng_state(read_rng_state(state["rng"]))
        self.logger.info(f"[learner] loaded checkpoint {path} at train_iter={self._train_iter} envstep={self._envstep}")
