"""``GymnasiumEnv``: any Gymnasium env (or id) as a Stride ``BaseEnv``.

Better than DI-engine's ``DingEnvWrapper`` on purpose: termination and truncation stay two
separate flags (DI folds them into one ``done``), the final step carries the true final
observation, seeding goes through ``reset(seed=...)`` from a private stream (never the global
NumPy RNG), and an action outside the space fails with a message naming the space.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, SupportsFloat, Tuple, Union, cast

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ..config.view import declared, setting
from ..utils.errors import ConfigError, InvalidActionError, StrideError
from ..utils.extras import import_extra
from ..utils.gym_ids import env_spec
from ..utils.registry import ENV_REGISTRY
from .base_env import ActT, BaseEnv, BaseEnvTimestep, EnvConfig, ObsT, episode_end_info
from .replay import RecordEpisodes, require_video


def _float32_space(space: gym.spaces.Space[ObsT]) -> gym.spaces.Space[ObsT]:
    """Float64 Boxes become float32 (what networks eat); other spaces are kept."""
    if isinstance(space, gym.spaces.Box) and space.dtype == np.float64:
        # the same kind of value (an array; a dict of arrays below), float32 in place of float64
        return cast("gym.spaces.Space[ObsT]",
                    gym.spaces.Box(space.low.astype(np.float32), space.high.astype(np.float32), dtype=np.float32))
    if isinstance(space, gym.spaces.Dict):
        return cast("gym.spaces.Space[ObsT]", gym.spaces.Dict({k: _float32_space(v) for k, v in space.spaces.items()}))
    return space


#: Gymnasium env families behind an optional dependency: entry-point prefix -> (module, extra, what).
#: Imported through import_extra before gymnasium.make, so a missing one is one line naming the extra.
_ENV_EXTRAS: Dict[str, Tuple[str, str, str]] = {
    "gymnasium.envs.mujoco": ("mujoco", "mujoco", "MuJoCo envs"),
    # LunarLander, BipedalWalker, CarRacing: Gymnasium's own message would say `pip install swig`
    "gymnasium.envs.box2d": ("Box2D", "box2d", "Box2D envs"),
}
#: the same for recording videos (``rgb_array`` frames): Gymnasium draws these families with pygame
#: (``gymnasium[classic-control]``, part of the ``[video]`` extra; Box2D's extra brings it already)
_RENDER_EXTRAS: Dict[str, Tuple[str, str, str]] = {
    "gymnasium.envs.classic_control": ("pygame", "video", "videos of classic-control envs"),
    "gymnasium.envs.toy_text": ("pygame", "video", "videos of toy-text envs"),
}


def _offscreen_rendering(entry_point: object) -> None:
    """MuJoCo renders through an OpenGL context it makes per ``MUJOCO_GL`` (``glfw`` by default,
    which needs a display): on a machine without one, recording picks EGL, the headless GPU/Mesa
    backend, unless the user chose a backend. (Gymnasium leaves it to the user, whose first video
    on a server ends in ``FatalError: an OpenGL platform library has not been loaded``.)"""
    if isinstance(entry_point, str) and entry_point.startswith("gymnasium.envs.mujoco") \
            and "MUJOCO_GL" not in os.environ and not os.environ.get("DISPLAY"):
        os.environ["MUJOCO_GL"] = "egl"


def _import_env_extra(entry_point: object, extras: Mapping[str, Tuple[str, str, str]] = _ENV_EXTRAS) -> None:
    """Import the optional dependency of a Gymnasium env family (see ``_ENV_EXTRAS``; recording:
    ``_RENDER_EXTRAS``), if any."""
    if isinstance(entry_point, str):
        for prefix, (module, extra, what) in extras.items():
            if entry_point.startswith(prefix):
                import_extra(module, extra, what=what)


_NP_INT64 = np.int64
_new_tuple = tuple.__new__
_MAX_CACHED_ACTIONS = 4096  # discrete spaces up to this size get the cached-scalar fast path


@dataclass(frozen=True)
class GymnasiumConfig(EnvConfig):
    """``env`` of a :class:`GymnasiumEnv` (and of the env families built on it)."""

    #: (str) Gymnasium env id, e.g. 'CartPole-v1'; 'my_pkg:MyEnv-v0' imports my_pkg first (as gymnasium.make).
    env_id: Optional[str] = None
    #: (int|None) override the env's time limit.
    max_episode_steps: Optional[int] = setting(None, "[1, inf)", kind=int)
    #: (dict) extra keyword arguments for gymnasium.make.
    make_kwargs: Mapping[str, object] = declared({})
    #: (bool) expose a bounded Box action space as [-1, 1], mapped affinely onto the real bounds
    #: (so a tanh policy fits any env).
    act_scale: bool = False


@ENV_REGISTRY.register("gymnasium")
class GymnasiumEnv(BaseEnv[ObsT, ActT]):
    """Wrap ``env_or_id`` (a ``gymnasium.Env[ObsT, ActT]`` or a registered id) lazily.

    Observations and actions are the wrapped env's (float64 Box observations come as float32;
    with ``act_scale`` a Box action is the [-1, 1] one).

    Config keys (all optional, :class:`GymnasiumConfig`): ``env_id`` (used when ``env_or_id`` is
    None), ``max_episode_steps``, ``make_kwargs`` (passed to ``gymnasium.make``), ``act_scale``.
    """

    config_view = GymnasiumConfig
    _typed: GymnasiumConfig

    def __init__(self, env_or_id: Union[gym.Env[ObsT, ActT], str, None] = None,
                 cfg: Optional[Mapping[str, object]] = None) -> None:
        super().__init__(cfg)
        if env_or_id is None:
            env_id = self._typed.env_id
            if env_id is None:
                raise ValueError("GymnasiumEnv needs a gymnasium.Env or an env id (cfg.env_id)")
            if not isinstance(env_id, str):
                raise ConfigError(f"env_id must be a Gymnasium env id (a str), got {env_id!r}")
            env_or_id = env_id
        self._env_id = env_or_id if isinstance(env_or_id, str) else None
        self._env: Optional[gym.Env[ObsT, ActT]] = None if isinstance(env_or_id, str) else env_or_id
        self._episode_return: Any = 0.0  # the sum of the env's rewards as they come (float or NumPy scalars)
        self._obs_space: Optional[gym.spaces.Space[ObsT]] = None
        self._act_space: Optional[gym.spaces.Space[ActT]] = None
        self._discrete_n: Optional[int] = None
        self._discrete_start = 0
        self._cast_obs = False
        self._action_space_seed_pending = False
        self._box: Optional[Tuple[npt.NDArray[Any], npt.NDArray[Any], int]] = None  # (low - tol, high + tol, size) of a Box action space
        # int actions in [_fast_lo, _fast_hi) take step's fast path; the range is empty until a reset
        self._fast_lo = self._fast_hi = 0
        self._int_actions: List[np.integer[Any]] = []  # discrete action start + k as the space's NumPy scalar, at index k
        self._enforce_order = False  # made here without OrderEnforcing: refuse a step before reset
        self._was_reset = False
        # (low, half range, high, dtype) when act_scale is on
        self._act_affine: Optional[Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64],
                                         np.dtype[Any]]] = None

    # ---- lazy creation -------------------------------------------------------------------
    def _make(self) -> gym.Env[ObsT, ActT]:
        """The wrapped env, made (and its spaces read) on first use."""
        env = self._env
        if env is None:
            env = self._env = self._create()
        if self._obs_space is None:
            self._read_spaces(env)
        return env

    def _create(self) -> gym.Env[ObsT, ActT]:
        """``gymnasium.make`` the env id, without gymnasium's OrderEnforcing wrapper (one Python
        frame per step): this class refuses a step before the first reset itself, at no cost per step."""
        env_id = self._env_id
        if env_id is None:  # an env object is made by its owner; close() dropped it
            raise StrideError("this GymnasiumEnv wraps an env object that was closed; it cannot be made again")
        try:
            make_kwargs: object = self._typed.make_kwargs or {}  # (an env built directly: as given)
            if not isinstance(make_kwargs, Mapping):
                raise ConfigError(f"make_kwargs must be a dict of gymnasium.make keyword arguments, got {make_kwargs!r}")
            kwargs: Dict[str, Any] = dict(make_kwargs)  # passed on to gymnasium.make's **kwargs: Any
            if self._typed.max_episode_steps is not None:
                kwargs["max_episode_steps"] = self._typed.max_episode_steps
            spec = dataclasses.replace(env_spec(env_id), order_enforce=False)
            if self._replay_path is not None:  # Gymnasium fixes render_mode at make: frames for the video
                mode = kwargs.setdefault("render_mode", "rgb_array")
                if mode != "rgb_array":
                    raise ConfigError(f"recording videos of '{env_id}' needs render_mode='rgb_array', "
                                      f"make_kwargs sets render_mode={mode!r}")
                _offscreen_rendering(spec.entry_point)
                _import_env_extra(spec.entry_point, _RENDER_EXTRAS)
            _import_env_extra(spec.entry_point)
            env: gym.Env[ObsT, ActT] = gym.make(spec, disable_env_checker=True, **kwargs)
        except gym.error.Error as e:
            raise ConfigError(f"cannot make Gymnasium env '{env_id}': {e}") from None
        self._enforce_order = True
        if self._replay_path is not None:
            env = RecordEpisodes(env, self._replay_path)
        return env

    def enable_save_replay(self, replay_path: str) -> None:
        """Write one mp4 per finished episode into ``replay_path`` (``episode0000.mp4``, ...; needs the
        ``[video]`` extra). An env made from an id is (re)made with ``render_mode='rgb_array'``;
        an env object must have been made so. Without this call no step pays for recording."""
        require_video()
        if self._replay_path is not None:
            raise StrideError(f"{self!r} already records into {self._replay_path!r}")
        self._replay_path = replay_path
        if self._env is None:
            return  # made (recording) on first use
        if self._env_id is not None:  # made without frames: make it again, recording
            self.close()
        else:
            self._env = RecordEpisodes(self._env, replay_path)

    def _read_spaces(self, env: gym.Env[ObsT, ActT]) -> None:
        """The spaces this env exposes and what the action check and step's fast path need."""
        raw = env.observation_space
        obs_space = _float32_space(raw)
        self._cast_obs = obs_space is not raw
        act_space = env.action_space
        if isinstance(act_space, gym.spaces.Discrete):
            n, start = int(act_space.n), int(act_space.start)
            self._discrete_n, self._discrete_start = n, start
            if n <= _MAX_CACHED_ACTIONS:
                scalar = act_space.dtype.type if act_space.dtype is not None else np.int64
                self._int_actions = [scalar(a) for a in range(start, start + n)]
        if self._typed.act_scale:
            # the [-1, 1] Box of a Box action space: the same kind of action (an array)
            act_space = cast("gym.spaces.Space[ActT]", self._scaled_action_space(act_space, env))
        if isinstance(act_space, gym.spaces.Box):  # bounds with tolerance for the action check
            self._box = (act_space.low - 1e-4, act_space.high + 1e-4, int(np.prod(act_space.shape)))
        self._act_space = act_space
        self._obs_space = obs_space

    def _scaled_action_space(self, space: gym.spaces.Space[ActT], env: gym.Env[ObsT, ActT]) -> gym.spaces.Box:
        """``act_scale``: [-1, 1] in place of the bounded Box ``space`` (the map is kept in ``_act_affine``)."""
        if not (isinstance(space, gym.spaces.Box) and np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))):
            raise ConfigError(f"act_scale=True needs a bounded Box action space, got {space} "
                              f"({self._env_id or type(env).__name__}); set act_scale=False")
        low, high = space.low.astype(np.float64), space.high.astype(np.float64)
        half = (high - low) / 2.0
        self._act_affine = (low, half, low + 2.0 * half, space.dtype)
        return gym.spaces.Box(-1.0, 1.0, shape=space.shape, dtype=space.dtype.type)

    # a gymnasium.Env's spaces are plain attributes; these are read from the wrapped env when first
    # asked for (making it), hence properties without setters
    @property
    def observation_space(self) -> gym.spaces.Space[ObsT]:  # type: ignore[override]
        self._make()
        assert self._obs_space is not None  # _make read it
        return self._obs_space

    @property
    def action_space(self) -> gym.spaces.Space[ActT]:  # type: ignore[override]
        self._make()
        assert self._act_space is not None  # _make read it
        return self._act_space

    @property
    def reward_space(self) -> gym.spaces.Box:
        return gym.spaces.Box(-np.inf, np.inf, shape=(), dtype=np.float32)

    @property
    def env_id(self) -> str:
        """The Gymnasium id (the wrapped env's ``spec.id`` when given an env object), else the
        wrapped env's class name: what the env managers' messages name the env by."""
        if self._env_id is not None:
            return self._env_id
        spec = getattr(self._env, "spec", None)
        return spec.id if spec is not None else type(self._env).__name__

    # ---- episode ---------------------------------------------------------------------------
    def _obs(self, obs: ObsT) -> ObsT:
        """float64 values as float32 (``_cast_obs``): the same kind of value (``_float32_space``;
        ignores, not casts: no call on the step path)."""
        if not self._cast_obs:
            return obs
        if isinstance(obs, dict):
            return {k: np.asarray(v, dtype=np.float32) if np.asarray(v).dtype == np.float64 else v  # type: ignore[return-value]
                    for k, v in obs.items()}
        return np.asarray(obs, dtype=np.float32)  # type: ignore[return-value]

    def reset(self, seed: Optional[int] = None, **kwargs: object) -> ObsT:  # type: ignore[override]
        env = self._make()
        if seed is None:
            seed = self.next_episode_seed()
        if self._action_space_seed_pending and self._seed is not None and self._act_space is not None:
            self._act_space.seed(self._seed)
            self._action_space_seed_pending = False
        options = kwargs.get("options")
        if not (options is None or isinstance(options, dict)):
            raise ConfigError(f"reset options must be a dict, got {options!r}")
        obs, _ = env.reset(seed=seed, options=options)
        self._episode_return = 0.0
        self._was_reset = True
        if self._int_actions:
            self._fast_lo, self._fast_hi = self._discrete_start, self._discrete_start + len(self._int_actions)
        return self._obs(obs)

    def seed(self, seed: Optional[int], dynamic_seed: bool = True) -> None:
        super().seed(seed, dynamic_seed)
        self._action_space_seed_pending = True

    def _check_action(self, action: object) -> object:
        """``action`` as the env takes it (a scaled Box action mapped onto the real bounds), or
        ``InvalidActionError`` naming the space."""
        if self._discrete_n is not None:
            return self._check_discrete(action, self._discrete_start, self._discrete_n)
        space = self._act_space
        if isinstance(space, gym.spaces.Box) and self._box is not None:
            checked = self._check_box(action, space, self._box)
            if self._act_affine is not None:  # [-1, 1] -> [low, high]
                low, half, high, dtype = self._act_affine
                checked = np.minimum(np.maximum(low + (checked + 1.0) * half, low), high).astype(dtype)
            return checked
        if space is None or not space.contains(action):
            raise InvalidActionError(f"action {action!r} is outside the action space {space}")
        return action

    def _check_discrete(self, action: object, start: int, n: int) -> int:
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            a: Optional[int] = int(action)  # the hot path: one check, no array conversion
        else:
            try:
                arr = np.asarray(action)
                a = int(arr.reshape(-1)[0]) if arr.size == 1 and arr.dtype.kind in "iu" else None
            except (TypeError, ValueError):
                a = None
        if a is None or not (start <= a < start + n):
            shown = np.asarray(action).tolist() if isinstance(action, (np.ndarray, np.generic)) else action
            raise InvalidActionError(
                f"action {shown!r} is outside the action space {self._act_space} of "
                f"{self._env_id or type(self._env).__name__}; valid actions: {start}..{start + n - 1}"
            )
        return a

    @staticmethod
    def _check_box(action: object, space: gym.spaces.Box, box: Tuple[npt.NDArray[Any], npt.NDArray[Any], int]) -> npt.NDArray[Any]:
        lo_tol, hi_tol, size = box
        a = np.asarray(action, dtype=space.dtype)
        if a.size != size:
            raise InvalidActionError(
                f"action {action!r} does not fit the action space {space} "
                f"(expected shape {space.shape}, finite values)"
            )
        a = a.reshape(space.shape)
        # one pass: NaN fails both comparisons, +-inf fails one, so this also refuses non-finite values
        if not ((a >= lo_tol) & (a <= hi_tol)).all():
            if not np.all(np.isfinite(a)):
                raise InvalidActionError(
                    f"action {action!r} does not fit the action space {space} "
                    f"(expected shape {space.shape}, finite values)"
                )
            raise InvalidActionError(
                f"action {a.tolist()} is outside the action space bounds low={space.low.tolist()} "
                f"high={space.high.tolist()}"
            )
        clipped: npt.NDArray[Any] = np.minimum(np.maximum(a, space.low), space.high)
        return clipped

    def step(self, action: ActT) -> BaseEnvTimestep[ObsT]:  # type: ignore[override]  # BaseEnv.step, not Gymnasium's
        # The hot path costs a type check, a range check and a list lookup over the raw env's own
        # step: an in-range int action of a discrete env that was reset (the range is empty until
        # then; anything else, and every non-discrete env, takes _prepare_action) reaches the env
        # as the cached NumPy scalar of the space's dtype -- what the space's sample() gives, and
        # what gymnasium's Discrete.contains (asserted by CartPole on every step) checks ~0.5 us
        # faster than a Python int. The timestep is built with tuple.__new__ (half the cost of
        # the namedtuple's Python-level __new__, same object). Every env manager calls this
        # method for every step: it is the only code that keeps the episode's return.
        t = type(action)
        # (mypy does not narrow ``action`` by the cached ``type``; the test is the int one)
        if (t is int or t is _NP_INT64) and self._fast_lo <= action < self._fast_hi:  # type: ignore[operator]
            action = self._int_actions[action - self._fast_lo]  # type: ignore[operator, assignment]
        else:
            action = self._prepare_action(action)
        env = self._env
        assert env is not None  # the fast path needs a reset; _prepare_action makes the env
        obs, reward, terminated, truncated, info = env.step(action)
        self._episode_return += reward
        if self._cast_obs:
            obs = self._obs(obs)
        if terminated or truncated:
            return self._end_timestep(obs, reward, terminated, truncated, info)
        return _new_tuple(BaseEnvTimestep, (obs, reward, False, info))

    def _end_timestep(self, obs: ObsT, reward: SupportsFloat, terminated: bool, truncated: bool,
                      info: Dict[str, Any]) -> BaseEnvTimestep[ObsT]:
        """The last timestep of an episode (``_episode_return`` already holds ``reward``): a copy
        of ``info`` with ``terminated``, ``truncated`` (only when not terminated) and the return."""
        info = episode_end_info(info, terminated, truncated, self._episode_return)
        return _new_tuple(BaseEnvTimestep, (obs, reward, True, info))

    def _prepare_action(self, action: ActT) -> ActT:
        """Make the env if needed, check ``action`` against the space (mapping a scaled Box action)."""
        if self._env is None or self._obs_space is None:
            self._make()
        if self._enforce_order and not self._was_reset:
            raise gym.error.ResetNeeded("Cannot call env.step() before calling env.reset()")
        # what the check gives is an action the wrapped env takes, a value of its space (an ignore,
        # not a cast: no call on the step path)
        return self._check_action(action)  # type: ignore[return-value]

    def random_action(self) -> ActT:
        return self.action_space.sample()

    def close(self) -> None:
        self._fast_lo = self._fast_hi = 0  # a step after close makes the env again (slow path)
        self._was_reset = False
        if self._env is not None:
            self._env.close()
            self._env = None

    def __repr__(self) -> str:
        return f"GymnasiumEnv({self._env_id or self._env!r})"
