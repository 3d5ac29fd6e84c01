"""``BaseEnvManager``: N environments stepped in this process.

The manager owns one seed stream per env (never the global NumPy RNG): with ``dynamic_seed`` the
streams run on, so every collected episode differs; without it (evaluation) every ``reset()``
restarts them, so every evaluation replays the same sequence of distinct episodes -- unlike
DI-engine, whose fixed seeds make all episodes of one env identical.

Error tolerance: an exception in an env's ``step`` ends that episode with
``info['abnormal'] = True`` (the step is not re-issued: re-stepping a stateful env would apply the
action twice, a DI-engine quirk) and the env is reset. A reset that raises is tried again, up to
``max_retry`` attempts (3 by default; DI-engine's 1 ends the run at the first flaky reset), on the
same env object (``retry_type='reset'``) or on one rebuilt from its factory (``'renew'``). User
errors (an action outside the space) are never retried. The manager records each in-flight episode's seed and actions, so
:meth:`state_dict` / :meth:`load_state_dict` restore the envs exactly by replaying them.

Every step and reset is checked (``checks.py``, ~0.2 us per step): an observation that does not
fit the observation space stops the run with one line naming the expected and received shapes;
a NaN or infinite reward or observation stops it with one line naming the env, its episode step
and the bad value (``nonfinite='raise'``), or closes the episode as abnormal like a crash,
counted in :attr:`nonfinite_dropped` (``nonfinite='drop'``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Callable, Dict, Generic, List, Mapping, Optional, Tuple, Type, cast

import gymnasium as gym
import numpy as np

from ...config import Configurable
from ...config.view import ConfigView, setting
from ...utils.errors import ConfigError, StrideError
from ...utils.registry import ENV_MANAGER_REGISTRY
from ..base_env import ActT, BaseEnv, BaseEnvTimestep, ObsT
from .checks import (NONFINITE_CHOICES, NonFiniteError, ObservationShapeError, StepCheck, env_label, find_problem,
                     make_step_check, nonfinite_message, shape_message)

logger = logging.getLogger(__name__)

_SEED_BLOCK = 64  # episode seeds drawn from an env's stream at a time


class _Dropped(Exception):
    """A step or reset whose reward or observation was not finite, under ``nonfinite='drop'``:
    handled like an env crash (the episode closed as abnormal, a reset attempt failed)."""


def _as_plain(action: object) -> object:
    """An action as plain Python values (for checkpoints that must load with weights_only); a
    dict of actions (an agent-keyed env's) value by value."""
    if isinstance(action, dict):
        return {k: _as_plain(v) for k, v in action.items()}
    if isinstance(action, np.ndarray):
        return action.tolist()
    if isinstance(action, np.generic):
        return action.item()
    tolist = getattr(action, "tolist", None)
    if callable(tolist):
        return tolist()
    return action


@dataclass(frozen=True)
class EnvManagerConfig(ConfigView):
    """``env.manager``: what every env manager reads (subclasses add their own settings)."""

    #: (int|float) episodes per env before the manager reports done; inf = run forever.
    episode_num: float = setting(float("inf"), "[1, inf]")
    #: (int) attempts at one reset (a reset that raises, hangs or returns a non-finite
    #: observation under nonfinite='drop' is tried again) before giving up with an error.
    max_retry: int = setting(3, "[1, inf)")
    #: (str) after a failed step or reset: 'reset' resets the same env object (a worker that
    #: hung or died is replaced all the same); 'renew' rebuilds the env from its factory
    #: (subprocess managers: in a new worker process).
    retry_type: str = setting("reset", ("reset", "renew"))
    #: (bool) reset an env as soon as its episode ends.
    auto_reset: bool = True
    #: (float|None) seconds one env may spend in one step; None waits forever. Enforced by
    #: the subprocess managers (an env in this process cannot be interrupted): a worker that
    #: has not answered within this per env it steps is replaced and the episode closed as
    #: abnormal. 60 s catches a hang within a minute and stays far above the steps of slow
    #: simulators (physics with rendering, Unity / CARLA-style clients: well under 10 s);
    #: ML-Agents gives a Unity env the same 60 s to answer.
    step_timeout: Optional[float] = setting(60.0, "(0, inf]", optional=True)
    #: (float|None) the same for one reset, which may load a level or start a simulator
    #: (CARLA map loads, MineRL world generation: tens of seconds to minutes): 300 s. A
    #: reset that overruns counts as a failed attempt (max_retry).
    reset_timeout: Optional[float] = setting(300.0, "(0, inf]", optional=True)
    #: (float) seconds to wait between two reset attempts.
    retry_waiting_time: float = setting(0.1, "[0, inf)")
    #: (str) a NaN or infinite reward or observation: 'raise' stops the run with one line
    #: naming the env and the step; 'drop' closes the episode as abnormal like a crashed env
    #: (a reset is retried), counts it (nonfinite_dropped) and warns; 'ignore' checks nothing.
    nonfinite: str = setting("raise", NONFINITE_CHOICES)


@ENV_MANAGER_REGISTRY.register("base")
class BaseEnvManager(Configurable, Generic[ObsT, ActT]):
    """Step ``len(env_fn)`` envs in this process; envs that finish an episode are reset here.

    ``BaseEnvManager[ObsT, ActT]`` steps ``BaseEnv[ObsT, ActT]`` envs: ``ready_obs`` holds ObsT,
    ``step`` takes ActT; an abnormal timestep's ``obs`` is None.
    """

    config_view = EnvManagerConfig

    def __init__(self, env_fn: List[Callable[[], BaseEnv[ObsT, ActT]]], cfg: Optional[Mapping[str, object]] = None) -> None:
        if not env_fn:
            raise ConfigError("an env manager needs at least one env factory (env_fn is empty)")
        self._cfg = self.typed_config(EnvManagerConfig, {k: v for k, v in (cfg or {}).items() if k != "type"},
                                      prefix="env.manager.")
        self._finite = self._cfg.nonfinite != "ignore"
        self._drop_nonfinite = self._cfg.nonfinite == "drop"
        self._nonfinite_dropped = 0
        self._env_fn = list(env_fn)
        self._env_num = len(env_fn)
        # per env, from its own observation space when it is made: the step check (checks.py) and the space
        self._checks: List[StepCheck] = []
        self._obs_spaces: List[gym.spaces.Space[ObsT]] = []
        self._max_retry = self._cfg.max_retry
        self._episode_num = self._cfg.episode_num
        self._auto_reset = self._cfg.auto_reset
        self._envs: List[BaseEnv[ObsT, ActT]] = []  # while launched
        self._closed = True
        self._seed: Optional[int] = None
        self._dynamic_seed = True
        self._seed_streams: Optional[List[np.random.Generator]] = None
        self._seed_queue: List[List[int]] = [[] for _ in range(self._env_num)]  # drawn, not yet used (reversed)
        self._ready_obs: Dict[int, ObsT] = {}
        self._episode_count = [0] * self._env_num
        self._episode_seed: List[Optional[int]] = [None] * self._env_num
        self._episode_actions: List[List[object]] = [[] for _ in range(self._env_num)]  # ActT, or plain values after a resume
        self._spaces: Optional[Tuple[gym.spaces.Space[ObsT], gym.spaces.Space[ActT], gym.spaces.Box]] = None
        self._reset_param: Dict[int, Mapping[str, object]] = {}

    # ---- properties ------------------------------------------------------------------------
    @property
    def env_num(self) -> int:
        return self._env_num

    @property
    def ready_obs(self) -> Dict[int, ObsT]:
        """``{env_id: obs}`` of the envs waiting for an action."""
        return self._ready_obs

    @property
    def ready_obs_id(self) -> List[int]:
        return list(self._ready_obs)

    @property
    def nonfinite_dropped(self) -> int:
        """Episodes closed and resets retried because of a NaN or infinite reward or observation
        (``nonfinite='drop'``), since this manager was made."""
        return self._nonfinite_dropped

    @property
    def done(self) -> bool:
        """True once every env has run ``episode_num`` episodes."""
        return all(c >= self._episode_num for c in self._episode_count)

    @property
    def closed(self) -> bool:
        return self._closed

    def episode_seed(self, env_id: int) -> Optional[int]:
        """The reset seed of env ``env_id``'s episode in flight (None: the manager is unseeded):
        that env reset with it and stepped with the episode's actions replays the episode (the
        demonstration datasets record it per episode)."""
        return self._episode_seed[env_id]

    def _reference_spaces(self) -> Tuple[gym.spaces.Space[ObsT], gym.spaces.Space[ActT], gym.spaces.Box]:
        """The spaces of env 0 (made for the purpose when the manager is not launched)."""
        if self._spaces is None:
            env = self._envs[0] if self._envs else self._env_fn[0]()
            self._spaces = (env.observation_space, env.action_space, env.reward_space)
            if not self._envs:
                env.close()
        return self._spaces

    @property
    def observation_space(self) -> gym.spaces.Space[ObsT]:
        return self._reference_spaces()[0]

    @property
    def action_space(self) -> gym.spaces.Space[ActT]:
        return self._reference_spaces()[1]

    @property
    def reward_space(self) -> gym.spaces.Box:
        return self._reference_spaces()[2]

    # ---- seeding ----------------------------------------------------------------------------
    def seed(self, seed: Optional[int], dynamic_seed: bool = True) -> None:
        """Give env ``i`` its own stream of episode seeds derived from ``(seed, i)``."""
        self._seed = None if seed is None else int(seed)
        self._dynamic_seed = bool(dynamic_seed)
        self._restart_seed_streams()

    def _restart_seed_streams(self) -> None:
        self._seed_queue = [[] for _ in range(self._env_num)]
        if self._seed is None:
            self._seed_streams = None
            return
        tag = 1 if self._dynamic_seed else 2
        self._seed_streams = [
            np.random.default_rng(np.random.SeedSequence([self._seed, i, tag])) for i in range(self._env_num)
        ]
        for i, env in enumerate(self._envs):
            env.seed(self._seed + i, dynamic_seed=self._dynamic_seed)

    def _draw_episode_seed(self, env_id: int) -> Optional[int]:
        seed = self._peek_episode_seed(env_id)
        if seed is not None:
            self._seed_queue[env_id].pop()
        return seed

    def _peek_episode_seed(self, env_id: int) -> Optional[int]:
        """The seed the next :meth:`_draw_episode_seed` will return, without drawing it."""
        if self._seed_streams is None:
            return None
        queue = self._seed_queue[env_id]
        if not queue:
            self._fill_seed_queue(env_id, self._seed_streams[env_id])
        return queue[-1]

    def _fill_seed_queue(self, env_id: int, stream: np.random.Generator) -> None:
        # one call for 64 seeds is the same sequence as 64 single draws, at a tenth of the cost
        block: List[int] = stream.integers(0, 2**31 - 1, size=_SEED_BLOCK).tolist()
        block.reverse()
        self._seed_queue[env_id][:0] = block  # in place: callers hold the list

    # ---- lifecycle --------------------------------------------------------------------------
    def launch(self, reset_param: Optional[Mapping[int, Mapping[str, object]]] = None) -> None:
        """Create the envs and reset them all."""
        if not self._closed:
            raise StrideError("env manager is already launched; call close() first")
        envs = [self._create_env(i) for i in range(self._env_num)]
        self._envs = envs
        self._obs_spaces = [env.observation_space for env in envs]
        self._checks = [make_step_check(space, self._finite) for space in self._obs_spaces]
        self._closed = False
        self.reset(reset_param)

    def _create_env(self, env_id: int) -> BaseEnv[ObsT, ActT]:
        env = self._env_fn[env_id]()
        if self._seed is not None:
            env.seed(self._seed + env_id, dynamic_seed=self._dynamic_seed)
        return env

    def reset(self, reset_param: Optional[Mapping[int, Mapping[str, object]]] = None) -> None:
        """Reset all envs (or those in ``reset_param``, whose kwargs are kept for later resets)."""
        self._check_open()
        if reset_param is not None:
            self._reset_param.update(reset_param)
            ids = list(reset_param)
        else:
            ids = list(range(self._env_num))
            self._episode_count = [0] * self._env_num
            if not self._dynamic_seed:
                self._restart_seed_streams()
        for i in ids:
            self._ready_obs.pop(i, None)
        for i in ids:
            self._reset_env(i)

    def _reset_env(self, env_id: int) -> None:
        """Reset one env, retrying (and renewing) up to ``max_retry`` times."""
        seed = self._draw_episode_seed(env_id)
        last_exc: Optional[BaseException] = None
        for attempt in range(self._max_retry):
            try:
                if attempt > 0 and self._cfg.retry_type == "renew":
                    self._renew_env(env_id)
                obs = self._envs[env_id].reset(seed=seed, **self._reset_param.get(env_id, {}))
                if not self._checks[env_id](obs, 0.0):
                    self._judge(env_id, obs, 0.0, None)
            except StrideError:
                raise
            except Exception as e:  # an env crash (or a non-finite observation under 'drop'): retry
                last_exc = e
                logger.warning("env %d reset failed (attempt %d/%d): %s", env_id, attempt + 1, self._max_retry,
                               e if isinstance(e, _Dropped) else repr(e))
                if attempt + 1 < self._max_retry:
                    time.sleep(self._cfg.retry_waiting_time)
                continue
            self._episode_seed[env_id] = seed
            self._episode_actions[env_id] = []
            self._ready_obs[env_id] = obs
            return
        self.close()
        raise RuntimeError(
            f"env {env_id} failed to reset {self._max_retry} time(s) (retry_type='{self._cfg.retry_type}'); "
            f"last error: {last_exc!r}"
        ) from last_exc

    def _renew_env(self, env_id: int) -> None:
        try:
            self._envs[env_id].close()
        except Exception:  # the broken env may not close cleanly
            pass
        self._envs[env_id] = env = self._create_env(env_id)
        self._obs_spaces[env_id] = space = env.observation_space
        self._checks[env_id] = make_step_check(space, self._finite)

    def step(self, actions: Mapping[int, ActT]) -> Dict[int, BaseEnvTimestep[Optional[ObsT]]]:
        """Step the given envs; finished ones are reset and reappear in ``ready_obs``.

        Each env is stepped by its own ``step`` (the one place that turns an env's result into a
        timestep and keeps the episode's return); per env this loop adds only what the contract
        needs: record the action for exact resume, hand out the timestep, update ``ready_obs``.
        A crash closes the episode as abnormal; a ``StrideError`` (a user error) propagates.
        """
        if self._closed:
            raise StrideError("env manager is closed; call launch() first")
        ready, recorded, envs = self._ready_obs, self._episode_actions, self._envs
        if not actions.keys() <= ready.keys():  # refuse before stepping anything: no half-applied call
            env_id = next(i for i in actions if i not in ready)
            raise StrideError(f"env {env_id} is not ready (ready envs: {sorted(ready)})")
        out: Dict[int, BaseEnvTimestep[Optional[ObsT]]] = {}
        checks = self._checks
        for env_id, action in actions.items():
            try:
                timestep = envs[env_id].step(action)
                if not checks[env_id](timestep[0], timestep[1]):
                    self._judge(env_id, timestep[0], timestep[1], len(recorded[env_id]) + 1)
            except StrideError:
                raise
            except Exception as e:  # the env crashed: close the episode as abnormal, never stitch it
                out[env_id] = self._step_failed(env_id, e)
                recorded[env_id].append(action)
                self._episode_end(env_id)
                continue
            recorded[env_id].append(action)
            out[env_id] = timestep
            if timestep[2]:  # done
                self._episode_end(env_id)
            else:
                ready[env_id] = timestep[0]
        return out

    def _judge(self, env_id: int, obs: object, reward: object, step: Optional[int]) -> None:
        """A step (``step`` = its number in the episode) or reset (None) that the cheap check
        suspected: raise ``ObservationShapeError`` / ``NonFiniteError``, raise ``_Dropped``
        (``nonfinite='drop'``), or return (a false suspicion, e.g. overflow in the check)."""
        problem = find_problem(self._obs_spaces[env_id], obs, reward, self._finite)
        if problem is None:
            return
        kind, what = problem
        label = env_label(self._envs[env_id])
        if kind == "shape":
            raise ObservationShapeError(shape_message(env_id, label, what))
        error = self._nonfinite_error(env_id, label, what, step)
        if error is not None:
            raise error
        raise _Dropped(nonfinite_message(env_id, label, what, step, advice=False))

    def _nonfinite_error(self, env_id: int, label: str, what: str, step: Optional[int]) -> Optional[NonFiniteError]:
        """The error that stops the run (``nonfinite='raise'``), or None after counting the drop."""
        if not self._drop_nonfinite:
            return NonFiniteError(nonfinite_message(env_id, label, what, step, advice=True))
        self._nonfinite_dropped += 1
        return None

    def _log_dropped(self, reason: str) -> None:
        logger.warning("%s: its episode is closed as abnormal (nonfinite='drop'; %d so far)", reason, self._nonfinite_dropped)

    def _step_failed(self, env_id: int, error: Exception) -> BaseEnvTimestep[None]:
        """The abnormal last timestep of an env whose ``step`` raised or returned a non-finite
        value under ``nonfinite='drop'`` (renewed if ``retry_type='renew'``)."""
        if isinstance(error, _Dropped):
            reason = str(error)
            self._log_dropped(reason)
        else:
            reason = repr(error)
            logger.warning("env %d step failed: %s; its episode is closed as abnormal", env_id, reason)
        if self._cfg.retry_type == "renew":
            self._renew_env(env_id)
        return BaseEnvTimestep(None, 0.0, True, {"abnormal": True, "error": reason})

    def _episode_end(self, env_id: int) -> None:
        """Count the episode; reset the env (auto-reset) or take it out of ``ready_obs``."""
        self._episode_count[env_id] += 1
        if self._auto_reset and self._episode_count[env_id] < self._episode_num:
            # overwrite in place: ready_obs stays in env-id order whatever the history, so a
            # resumed run batches envs exactly as an uninterrupted one
            self._reset_env(env_id)
        else:
            del self._ready_obs[env_id]

    def close(self) -> None:
        """Close every env; idempotent."""
        if self._closed:
            return
        self._closed = True
        for i, env in enumerate(self._envs):
            try:
                env.close()
            except Exception as e:
                logger.warning("env %d close failed: %r", i, e)
        self._envs = []
        self._ready_obs.clear()

    def _check_open(self) -> None:
        if self._closed:
            raise StrideError("env manager is closed; call launch() first")

    def __enter__(self) -> "BaseEnvManager[ObsT, ActT]":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def random_action(self) -> Dict[int, ActT]:
        """A random action for every ready env."""
        return {i: self._envs[i].random_action() for i in self._ready_obs}

    def enable_save_replay(self, replay_path: str) -> None:
        """Record videos of every env (call before ``launch``)."""
        fns = self._env_fn

        def _wrap(fn: Callable[[], BaseEnv[ObsT, ActT]], i: int) -> Callable[[], BaseEnv[ObsT, ActT]]:
            def make() -> BaseEnv[ObsT, ActT]:
                env = fn()
                env.enable_save_replay(f"{replay_path}/env{i}")
                return env

            return make

        self._env_fn = [_wrap(f, i) for i, f in enumerate(fns)]

    # ---- exact resume ----------------------------------------------------------------------
    def state_dict(self) -> Dict[str, object]:
        """Seed streams and in-flight episodes (seed + actions so far), as plain values."""
        return {
            "seed": self._seed,
            "dynamic_seed": self._dynamic_seed,
            "episode_count": list(self._episode_count),
            "streams": [None if s is None else s.bit_generator.state for s in (self._seed_streams or [])],
            "seed_queue": [list(q) for q in self._seed_queue],
            "episodes": [
                {"seed": self._episode_seed[i], "actions": [_as_plain(a) for a in self._episode_actions[i]]}
                for i in range(self._env_num)
            ],
        }

    @staticmethod
    def _episodes_state(state: Mapping[str, object]) -> Tuple[List[int], List[Tuple[Optional[int], List[object]]]]:
        """(episode count, (seed, actions) of the in-flight episode) per env, from a :meth:`BaseEnvManager.state_dict`."""
        counts, episodes = state["episode_count"], state["episodes"]
        if not isinstance(counts, (list, tuple)) or not isinstance(episodes, (list, tuple)):
            raise StrideError(f"not an env manager state_dict (keys {sorted(state)})")
        out: List[Tuple[Optional[int], List[object]]] = []
        for ep in episodes:
            seed, actions = ep["seed"], ep["actions"]
            if not (seed is None or isinstance(seed, int)) or not isinstance(actions, (list, tuple)):
                raise StrideError(f"not an env manager state_dict: episode {ep!r}")
            out.append((seed, list(actions)))
        return [int(c) for c in counts], out

    def _load_seed_state(self, state: Mapping[str, object]) -> None:
        """Seed, dynamic flag, stream states and the seeds drawn but not yet used."""
        seed, streams = state["seed"], state["streams"]
        queues = state.get("seed_queue", [[] for _ in range(self._env_num)])
        if not (seed is None or isinstance(seed, int)) or not isinstance(streams, (list, tuple)) or not isinstance(queues, (list, tuple)):
            raise StrideError(f"not an env manager state_dict (keys {sorted(state)})")
        self.seed(seed, bool(state["dynamic_seed"]))
        if streams and self._seed_streams is not None:
            for stream, st in zip(self._seed_streams, streams):
                stream.bit_generator.state = st
        self._seed_queue = [list(q) for q in queues]

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        """Restore seed streams and replay each in-flight episode (the manager must be launched)."""
        self._check_open()
        self._load_seed_state(state)
        counts, episodes = self._episodes_state(state)
        self._episode_count = counts
        for i, (seed, actions) in enumerate(episodes):
            env = self._envs[i]
            obs = env.reset(seed=seed, **self._reset_param.get(i, {}))
            for a in actions:
                # a recorded action, as state_dict keeps it (plain values): what the env took, or its
                # plain-value form, which the env takes as well (an array for a list)
                ts = env.step(cast(ActT, np.asarray(a) if isinstance(a, list) else a))
                obs = ts.obs
                if ts.done:
                    raise StrideError(f"env {i} ended its episode while replaying it: the env is not deterministic")
            self._episode_seed[i] = seed
            self._episode_actions[i] = list(actions)
            self._ready_obs[i] = obs


def create_env_manager(manager_cfg: Mapping[str, object],
                       env_fn: List[Callable[[], BaseEnv[ObsT, ActT]]]) -> BaseEnvManager[ObsT, ActT]:
    """Build the manager named by ``manager_cfg['type']`` (default ``'base'``)."""
    cfg = dict(manager_cfg)
    kind = cfg.pop("type", "base")
    if not isinstance(kind, str):
        raise ConfigError(f"env.manager.type must be an env manager name, got {kind!r}")
    manager = ENV_MANAGER_REGISTRY.get(kind)(env_fn, cfg)
    if not isinstance(manager, BaseEnvManager):
        raise TypeError(f"env manager '{kind}' built a {type(manager).__name__}, not a BaseEnvManager")
    return manager

