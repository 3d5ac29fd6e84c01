"""The environment contract: a superset of ``gymnasium.Env`` with DI-engine's step format.

``step`` returns ``BaseEnvTimestep(obs, reward, done, info)``. ``done`` marks the end of an
episode for bookkeeping; ``info['terminated']`` / ``info['truncated']`` (present on every final
step) say *why* it ended, because TD targets bootstrap on truncation and never on termination.
At the final step ``obs`` is the true final observation (never the next episode's first one) and
``info['eval_episode_return']`` holds the episode's return.

Seeding (``seed(seed, dynamic_seed)``) never touches the global NumPy RNG: with ``dynamic_seed``
each episode draws its seed from a private stream started by ``seed``; without it every episode
uses ``seed`` itself (DI-engine's semantics).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Dict, Generic, List, Mapping, Optional, SupportsFloat, Type

import gymnasium as gym
import numpy as np
from typing_extensions import NamedTuple, TypeVar  # (generic NamedTuple before Python 3.11)

from ..config.config import Configurable
from ..config.setting import REQUIRED, plain
from ..config.view import ConfigView
from ..utils.errors import StrideError
from .sample_transforms import SampleTransform

#: an env's observation type (``BaseEnv[ObsT, ActT]``, like ``gymnasium.Env[ObsType, ActType]``);
#: an env or manager named without type arguments is one of ``object``
ObsT = TypeVar("ObsT", default=object)
#: an env's action type
ActT = TypeVar("ActT", default=object)
#: the observation type of a ``BaseEnvTimestep`` (covariant: a timestep is read-only)
ObsT_co = TypeVar("ObsT_co", covariant=True, default=object)


class BaseEnvTimestep(NamedTuple, Generic[ObsT_co]):
    """One step's result; ``info`` carries ``terminated``/``truncated`` and the return at episode end.

    ``reward`` is what the env gave (Gymnasium's ``SupportsFloat``: a float or a NumPy scalar).
    """

    obs: ObsT_co
    reward: SupportsFloat
    done: bool
    info: Dict[str, object]


def episode_end_info(info: Mapping[str, object], terminated: bool, truncated: bool,
                     episode_return: SupportsFloat) -> Dict[str, object]:
    """The info of an episode's last timestep: a copy of ``info`` with ``terminated``,
    ``truncated`` (only when not terminated) and ``eval_episode_return``. The one place that
    writes them: envs (``GymnasiumEnv``) and batched backends (the ``'vector'`` manager) call it."""
    out = dict(info)
    out["terminated"] = bool(terminated)
    out["truncated"] = bool(truncated and not terminated)
    out["eval_episode_return"] = float(episode_return)
    return out


def declared_defaults(env_cls: type[Configurable]) -> Dict[str, object]:
    """The defaults an env class declares (``REQUIRED`` keys left out: the env's own check names them)."""
    return {k: v for k, v in plain(env_cls.declared_config()).items() if not (isinstance(v, str) and v == REQUIRED)}


@dataclass(frozen=True)
class EnvConfig(ConfigView):
    """``env``: the env's own settings (the pipeline's, ``collector_env_num`` and the rest, are
    ``stride.config.compile.EnvPipelineConfig``'s); an env family's view subclasses it."""


class BaseEnv(gym.Env[ObsT, ActT], Configurable, ABC):
    """Abstract environment: ``reset() -> obs``, ``step(action) -> BaseEnvTimestep``.

    A ``gymnasium.Env`` for its spaces, seeding and wrappers, but ``reset`` and ``step`` return
    DI-engine's formats (the first observation; a ``BaseEnvTimestep``), not Gymnasium's tuples:
    ``reset`` and ``step`` knowingly differ from ``gymnasium.Env``'s (their ``override`` ignores).
    """

    #: True for multi-agent envs whose observations, rewards and actions are dicts keyed by agent
    #: (:class:`~stride.envs.PettingZooEnv`): the entries show each (env, agent) to the workers as
    #: its own env id (:class:`~stride.envs.env_manager.MultiAgentManager`)
    agent_keyed: ClassVar[bool] = False
    #: the typed view of the env's own config (an env family subclasses :class:`EnvConfig`)
    config_view: ClassVar[Type[EnvConfig]] = EnvConfig
    _typed: EnvConfig  # the config as the env reads it (an env family narrows the type)

    def __init__(self, cfg: Optional[Mapping[str, object]] = None) -> None:
        # the declared defaults under the given values: an env built directly reads what a compiled one does
        # (``_cfg``, as given: an env declaring a dict reads it; ``_typed``: an env family's view of it)
        self._cfg: Mapping[str, object] = {**declared_defaults(type(self)), **(cfg or {})}
        self._typed = self.config_view.from_config(self._cfg, "env.")
        self._seed: Optional[int] = None
        self._dynamic_seed = True
        self._seed_stream: Optional[np.random.Generator] = None
        self._replay_path: Optional[str] = None

    @abstractmethod
    def reset(self, seed: Optional[int] = None, **kwargs: object) -> ObsT:  # type: ignore[override]
        """Start a new episode and return its first observation.

        ``seed`` (Gymnasium's convention) fixes this episode's seed; without it the seed comes from
        :meth:`next_episode_seed`. Env managers pass it so that they own the seed streams.
        """

    @abstractmethod
    def step(self, action: ActT) -> BaseEnvTimestep[ObsT]:  # type: ignore[override]
        """Advance one step."""

    def seed(self, seed: Optional[int], dynamic_seed: bool = True) -> None:
        """Seed the episodes that follow; see the module docstring for ``dynamic_seed``."""
        self._seed = None if seed is None else int(seed)
        self._dynamic_seed = bool(dynamic_seed)
        self._seed_stream = None if seed is None else np.random.default_rng(np.random.SeedSequence([int(seed), 7]))

    def next_episode_seed(self) -> Optional[int]:
        """The seed the next ``reset`` will use (advances the stream when dynamic)."""
        if self._seed is None:
            return None
        if not self._dynamic_seed or self._seed_stream is None:
            return self._seed
        return int(self._seed_stream.integers(0, 2**31 - 1))

    def seed_state(self) -> Optional[Dict[str, object]]:
        """The private seed stream's state as plain values (for exact resume)."""
        if self._seed_stream is None:
            return None
        return {"seed": self._seed, "dynamic": self._dynamic_seed, "rng": self._seed_stream.bit_generator.state}

    def load_seed_state(self, state: Optional[Mapping[str, object]]) -> None:
        """Restore what :meth:`seed_state` returned."""
        if state is None:
            return
        seed, rng = state["seed"], state["rng"]
        if not (seed is None or isinstance(seed, int)) or not isinstance(rng, dict):
            raise TypeError(f"not a seed state of BaseEnv.seed_state: {state!r}")
        self.seed(seed, bool(state["dynamic"]))
        if self._seed_stream is not None:
            self._seed_stream.bit_generator.state = rng

    def close(self) -> None:
        """Release the simulator."""

    @property
    def reward_space(self) -> gym.spaces.Box:
        """Reward range as a space (scalar Box by default)."""
        return gym.spaces.Box(-np.inf, np.inf, shape=(), dtype=np.float32)

    def random_action(self) -> ActT:
        """A uniformly random valid action."""
        return self.action_space.sample()

    def enable_save_replay(self, replay_path: str) -> None:
        """Record a video of each following episode into ``replay_path`` (one mp4 per episode).
        An env that cannot record says so instead of recording nothing; :class:`GymnasiumEnv`
        records (``stride.envs.replay``)."""
        raise StrideError(f"{type(self).__name__} does not record videos (enable_save_replay)")

    def make_vector_env(self, num_envs: int, num_threads: int = 0) -> "gym.vector.VectorEnv":
        """``num_envs`` copies of this env as one native batched env, for the ``'vector'`` env
        manager (Atari: ale-py's C++ vector env). The batched env follows Gymnasium's same-step
        autoreset: an env whose episode ends is reset within the step, ``info['final_obs']`` holds
        its final observation; ``reset(seed=<array>, options={'reset_mask': <bool array>})`` resets
        a subset; ``info['episode_score']`` (optional) is an ended episode's reported return."""
        raise StrideError(f"{type(self).__name__} has no native batched env (make_vector_env); "
                          "use env.manager.type 'base', 'subprocess' or 'async_subprocess'")

    @classmethod
    def evaluator_env_cfg(cls, cfg: Mapping[str, object]) -> Dict[str, object]:
        """The env config of the evaluator's envs, from the collector's (DI-engine's
        ``create_evaluator_env_cfg``): the same by default; Atari's evaluator plays whole games."""
        return dict(cfg)

    @classmethod
    def sample_transforms(cls, cfg: Mapping[str, object]) -> List[SampleTransform]:
        """What this env family does to the samples collected from envs of config ``cfg``
        (:mod:`stride.envs.sample_transforms`; the entries hand them to the collector): none by
        default; PettingZoo's board games with ``mirror=True`` add each sample mirrored."""
        return []

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
