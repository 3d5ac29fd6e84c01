"""``VectorEnvManager`` (``'vector'``): the env-manager contract over a native batched env.

Some simulators come with a batched env in C++ that steps all copies on its own threads (ale-py's
``AtariVectorEnv``, EnvPool): faster than any Python worker pool on a small machine, because no
Python runs per env and no observation crosses a process boundary. Rather than compete with
them, this manager runs one: the env class builds it (``BaseEnv.make_vector_env``) and the manager
turns each batched step into the per-env ``BaseEnvTimestep`` the collector and evaluator expect,
with the true final observation, ``terminated`` / ``truncated`` apart and the reported return.
DI-engine's ``env_pool`` manager is tied to EnvPool and configured with EnvPool's own keys; SB3
and Tianshou take a native batched env as a vector env of their own API. Here the env class builds
its native batched env from its own config (the keys of its Python path), so a config switches
with one key (``--set env.manager.type=vector``), workers do not change, and the evaluator's envs
still get the evaluator's config (Atari: whole games).

What a native batched env allows, and so what differs from the other managers:

- one step moves every env: an env that is ready but gets no action in a call (the evaluator
  idles envs that have played their share) takes action 0, silently; an episode that ends during
  such idle steps is not reported;
- seeds: each env is seeded from the manager's seed streams at ``launch`` and at a full
  ``reset()`` (so the evaluator replays the same episodes each time); the episodes in between
  follow from the env's own random state (a seeded reset of ale-py reloads the ROM, ~0.2 s);
- errors: an exception in the native env ends the run (there is no separate env to close as
  abnormal and replace); ``step_timeout``, ``reset_timeout``, ``retry_type`` and ``max_retry`` are
  accepted for config compatibility and have no effect;
- ``state_dict`` holds the seed streams; in-flight episodes cannot be replayed into a native env,
  so ``load_state_dict`` refuses (resume a run with another manager);
- ``close()`` stops the native env's threads; no process is started.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Tuple

import gymnasium as gym
import numpy as np

from ...config.view import setting
from ...utils.errors import ConfigError, InvalidActionError, StrideError
from ...utils.registry import ENV_MANAGER_REGISTRY
from ..base_env import ActT, BaseEnv, BaseEnvTimestep, ObsT, episode_end_info
from .base import BaseEnvManager, EnvManagerConfig
from .checks import make_step_check

logger = logging.getLogger(__name__)

_new_tuple = tuple.__new__


def _same_factories(env_fn: List[Callable[[], BaseEnv[ObsT, ActT]]]) -> bool:
    """Whether the factories visibly make the same env (the entries' ``functools.partial``s do)."""
    first = env_fn[0]
    if not isinstance(first, functools.partial):
        return all(f is first for f in env_fn)
    return all(isinstance(f, functools.partial) and f.func is first.func and f.args == first.args
               and f.keywords == first.keywords for f in env_fn)


def _checked_action(action: object, space: gym.spaces.Space[ActT], env_id: int) -> object:
    """``action`` as the batch takes it, or ``InvalidActionError`` naming the space (nothing stepped)."""
    if isinstance(space, gym.spaces.Discrete):
        a = np.asarray(action)
        if a.size == 1 and a.dtype.kind in "iu":
            k = int(a.reshape(-1)[0])
            if int(space.start) <= k < int(space.start + space.n):
                return k
        raise InvalidActionError(f"action {action!r} of env {env_id} is outside the action space {space}; "
                                 f"valid actions: {int(space.start)}..{int(space.start + space.n) - 1}")
    if not space.contains(action):
        raise InvalidActionError(f"action {action!r} of env {env_id} is outside the action space {space}")
    return action


@dataclass(frozen=True)
class VectorConfig(EnvManagerConfig):
    """``env.manager`` of ``'vector'``."""

    #: (str) a NaN or infinite reward or observation: 'raise' stops the run with one line;
    #: 'ignore' checks nothing ('drop' needs an env that can be closed alone).
    nonfinite: str = setting("raise", ("raise", "ignore"))
    #: (int) threads of the native batched env; 0 = one per core, at most one per env.
    num_threads: int = setting(0, "[0, inf)")


@ENV_MANAGER_REGISTRY.register("vector")
class VectorEnvManager(BaseEnvManager[ObsT, ActT]):
    """``len(env_fn)`` copies of one env stepped as the native batched env its class provides
    (``make_vector_env``); the module docstring lists what a native env allows."""

    config_view = VectorConfig
    _cfg: VectorConfig

    def __init__(self, env_fn: List[Callable[[], BaseEnv[ObsT, ActT]]], cfg: Optional[Mapping[str, object]] = None) -> None:
        super().__init__(env_fn, cfg)
        if not _same_factories(self._env_fn):
            raise ConfigError("env manager 'vector' runs copies of one env: its env factories must be the same "
                              "(functools.partial with equal arguments); use 'base' or 'subprocess' for different envs")
        self._vec: Optional[gym.vector.VectorEnv] = None
        self._actions: Optional[np.ndarray] = None  # the batch of actions, reused
        self._returns = np.zeros(self._env_num, dtype=np.float64)

    def _reference_spaces(self) -> Tuple[gym.spaces.Space[ObsT], gym.spaces.Space[ActT], gym.spaces.Box]:
        if self._spaces is None and self._vec is not None:
            env = self._envs[0]
            self._spaces = (self._vec.single_observation_space, self._vec.single_action_space, env.reward_space)
        return super()._reference_spaces()

    # ---- lifecycle --------------------------------------------------------------------------
    def launch(self, reset_param: Optional[Mapping[int, Mapping[str, object]]] = None) -> None:
        """Build the native batched env from the first factory's env, and reset every env."""
        if not self._closed:
            raise StrideError("env manager is already launched; call close() first")
        env = self._env_fn[0]()
        try:
            vec = env.make_vector_env(self._env_num, self._cfg.num_threads)
        except BaseException:
            env.close()
            raise
        if vec.num_envs != self._env_num:
            vec.close()
            env.close()
            raise StrideError(f"{env!r}.make_vector_env({self._env_num}) built {vec.num_envs} envs")
        self._vec, self._envs = vec, [env] * self._env_num  # env: labels, reward space
        space = vec.single_observation_space
        self._obs_spaces = [space] * self._env_num
        self._checks = [make_step_check(space, self._finite)] * self._env_num
        act = vec.single_action_space
        self._actions = np.zeros((self._env_num, *(act.shape or ())), dtype=act.dtype)
        self._closed = False
        self.reset(reset_param)

    def reset(self, reset_param: Optional[Mapping[int, Mapping[str, object]]] = None) -> None:
        """Reset all envs (or the ids in ``reset_param``, whose kwargs must be empty: a native env
        takes none), each with the next seed of its stream."""
        self._check_open()
        vec = self._vec
        assert vec is not None  # open
        if reset_param is not None:
            if any(reset_param.values()):
                raise StrideError(f"env manager 'vector' cannot pass reset kwargs to a native env: {dict(reset_param)!r}")
            ids = sorted(reset_param)
        else:
            ids = list(range(self._env_num))
            self._episode_count = [0] * self._env_num
            if not self._dynamic_seed:
                self._restart_seed_streams()
        seeds = [self._draw_episode_seed(i) for i in ids]
        mask = np.zeros(self._env_num, dtype=bool)
        mask[ids] = True
        options = None if len(ids) == self._env_num else {"reset_mask": mask}
        seed = None if self._seed is None else np.array(seeds, dtype=np.int64)
        # one seed per env reset, as an array (ale-py, EnvPool); Gymnasium's stub says int only
        obs, _ = vec.reset(seed=seed, options=options)  # type: ignore[arg-type]
        for i in ids:
            self._ready_obs.pop(i, None)  # re-added below in id order, as the base manager does
        for i, s in zip(ids, seeds):
            self._returns[i] = 0.0
            self._episode_seed[i] = s
            self._ready_obs[i] = obs[i]

    def step(self, actions: Mapping[int, ActT]) -> Dict[int, BaseEnvTimestep[Optional[ObsT]]]:
        """One step of the batch; a timestep for each env given an action."""
        if self._closed:
            raise StrideError("env manager is closed; call launch() first")
        ready = self._ready_obs
        if not actions.keys() <= ready.keys():  # refuse before stepping anything
            env_id = next(i for i in actions if i not in ready)
            raise StrideError(f"env {env_id} is not ready (ready envs: {sorted(ready)})")
        vec, batch = self._vec, self._actions
        assert vec is not None and batch is not None  # open
        batch[...] = 0
        space = vec.single_action_space
        for env_id, action in actions.items():
            batch[env_id] = _checked_action(action, space, env_id)
        obs, reward, terminated, truncated, info = vec.step(batch)
        self._returns += reward
        done = terminated | truncated
        final = info.get("final_obs")
        score = info.get("episode_score")
        out: Dict[int, BaseEnvTimestep[Optional[ObsT]]] = {}
        checks = self._checks
        for i in range(self._env_num):
            ended = bool(done[i])
            o = final[i] if ended and final is not None else obs[i]
            r = float(reward[i])
            if i not in actions:  # idle: moved with the batch, nothing reported
                if ended:
                    self._returns[i] = 0.0
                if i in ready:
                    ready[i] = obs[i]
                continue
            if not checks[i](o, r):
                self._judge(i, o, r, None)
            if not ended:
                ready[i] = obs[i]
                out[i] = _new_tuple(BaseEnvTimestep, (o, r, False, {}))
                continue
            ret = score[i] if score is not None else self._returns[i]
            extra = {"game_over": bool(info["game_over"][i])} if "game_over" in info else {}
            end_info = episode_end_info(extra, bool(terminated[i]), bool(truncated[i]), ret)
            out[i] = _new_tuple(BaseEnvTimestep, (o, r, True, end_info))
            self._returns[i] = 0.0
            self._episode_count[i] += 1
            if self._auto_reset and self._episode_count[i] < self._episode_num:
                ready[i] = obs[i]  # the native env reset it within the step
            else:
                del ready[i]
        return out

    def close(self) -> None:
        """Stop the native env (its threads); idempotent."""
        if self._closed:
            return
        self._closed = True
        vec, self._vec = self._vec, None
        if vec is not None:
            try:
                vec.close()
            except Exception as e:
                logger.warning("native batched env close failed: %r", e)
        for env in self._envs[:1]:
            env.close()
        self._envs = []
        self._ready_obs.clear()

    def random_action(self) -> Dict[int, ActT]:
        """A random action for every ready env."""
        space = self.action_space
        return {i: space.sample() for i in self._ready_obs}

    def enable_save_replay(self, replay_path: str) -> None:
        raise StrideError("env manager 'vector' cannot record videos (a native batched env renders no frames); "
                          "use env.manager.type 'base' for --replay-path")

    # ---- resume -----------------------------------------------------------------------------
    def load_state_dict(self, state: Mapping[str, object]) -> None:
        """Refused: a native batched env cannot replay the in-flight episodes."""
        raise StrideError("env manager 'vector' cannot resume in-flight episodes (a native batched env cannot "
                          "replay actions); resume this run with env.manager.type 'base' or 'subprocess'")
