"""Hindsight Experience Replay (Andrychowicz et al., 2017) as a reward model: goal relabelling.

Goal-conditioned envs follow Gymnasium-Robotics' convention: observations are dicts
``{'observation', 'achieved_goal', 'desired_goal'}`` and the env has a batched
``compute_reward(achieved_goal, desired_goal, info)`` (and, optionally,
``compute_terminated(achieved_goal, desired_goal, info)``).

Where relabelling happens: at **sampling time**, from whole episodes in the episode replay
buffer (``EpisodeCollector`` -> ``EpisodeReplayBuffer`` -> :meth:`HerRewardModel.estimate`), as
Stable-Baselines3's ``HerReplayBuffer`` does. The buffer holds each transition once (relabelling
at insert time, DI-engine's other option, stores k+1 copies), a transition gets a fresh goal every
time it is drawn (more distinct goals for the same memory), and the strategy or ``k`` can change
on a resumed run without touching the stored data.

Per learner batch: ``batch_items(batch_size)`` = ceil(batch_size / sample_per_episode) distinct
episodes are drawn; from each, ``sample_per_episode`` transitions uniformly (with replacement).
Each drawn transition ``t`` (obs_t, a_t, next_obs_t) keeps its goal with probability 1/(k+1) and
is relabelled with probability k/(k+1) (``her_replay_k`` = k relabelled replays per original one,
the paper's ratio) with the goal ``g = next_obs[j].achieved_goal``, where ``j`` is

* ``'final'``: T-1 (the goal reached at the episode's end),
* ``'future'``: uniform in [t, T-1] (a goal reached at or after this step; j = t is the goal
  this very action reached),
* ``'episode'``: uniform in [0, T-1] (any goal reached in the episode).

A relabelled transition gets ``g`` as ``desired_goal`` of both obs and next_obs, the reward
``compute_reward(next_obs_t.achieved_goal, g, {})`` and, when the env defines
``compute_terminated``, ``done = compute_terminated(...)`` (BitFlip ends on success; Fetch never
terminates); otherwise its collected ``done``. The info passed is empty: the buffer keeps no
per-step info (Gymnasium-Robotics' rewards do not read it). Everything is done on whole columns,
one NumPy call per field (DI-engine relabels transition by transition in Python).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

from ..config.view import setting
from ..utils.errors import ConfigError
from ..utils.registry import REWARD_MODEL_REGISTRY
from ..utils.narrow import as_mapping
from .base import Batch, BaseRewardModel, RewardModelConfig

STRATEGIES = ("future", "final", "episode")
GOAL_KEYS = ("observation", "achieved_goal", "desired_goal")
#: ``compute_reward`` / ``compute_terminated``: (achieved goals [B, G], desired goals [B, G], info) -> [B]
GoalFn = Callable[[npt.NDArray[np.generic], npt.NDArray[np.generic], Mapping[str, object]], object]


def goal_indices(strategy: str, t: npt.NDArray[np.int64], length: npt.NDArray[np.int64],
                 rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """For transitions at steps ``t`` of episodes of ``length`` steps: the step ``j`` whose
    ``next_obs.achieved_goal`` becomes the new goal (see the module docstring)."""
    if strategy == "final":
        return length - 1
    if strategy == "future":
        return t + (rng.random(len(t)) * (length - t)).astype(np.int64)
    if strategy == "episode":
        return (rng.random(len(t)) * length).astype(np.int64)
    raise ConfigError(f"unknown reward_model.her_strategy '{strategy}'; valid choices: {', '.join(STRATEGIES)}")


def _goal_obs(value: object, field: str) -> Mapping[str, object]:
    if not (isinstance(value, Mapping) and all(k in value for k in GOAL_KEYS)):
        got = sorted(value) if isinstance(value, Mapping) else type(value).__name__
        raise TypeError(f"HER needs dict observations with keys {list(GOAL_KEYS)} in '{field}', got {got!r}")
    return value


def relabel(columns: Mapping[str, object], rows: npt.NDArray[np.int64], goal_rows: npt.NDArray[np.int64],
            relabelled: npt.NDArray[np.bool_], compute_reward: GoalFn,
            compute_terminated: Optional[GoalFn] = None) -> Dict[str, object]:
    """The transitions ``rows`` of ``columns`` (one episode's or several episodes' columns, concatenated),
    those where ``relabelled`` is set given the goal ``next_obs['achieved_goal'][goal_rows]`` with its
    reward (and termination); a new batch of columns, ``columns`` untouched."""
    next_cols = _goal_obs(columns["next_obs"], "next_obs")
    obs = {k: np.asarray(v)[rows] for k, v in _goal_obs(columns["obs"], "obs").items()}
    next_obs = {k: np.asarray(v)[rows] for k, v in next_cols.items()}
    reward, done = np.asarray(columns["reward"])[rows], np.asarray(columns["done"])[rows]
    out: Dict[str, object] = {}
    for key, value in columns.items():
        if key in ("obs", "next_obs", "reward", "done"):
            continue
        out[key] = {k: np.asarray(v)[rows] for k, v in value.items()} if isinstance(value, Mapping) \
            else np.asarray(value)[rows]
    sel = np.flatnonzero(relabelled)
    if len(sel):
        goal = np.asarray(next_cols["achieved_goal"])[goal_rows[sel]]
        achieved = next_obs["achieved_goal"][sel]
        obs["desired_goal"][sel] = goal
        next_obs["desired_goal"][sel] = goal
        reward[sel] = _per_row(compute_reward(achieved, goal, {}), reward[sel].shape)
        if compute_terminated is not None:
            done[sel] = _per_row(compute_terminated(achieved, goal, {}), done[sel].shape)
    out.update(obs=obs, next_obs=next_obs, reward=reward, done=done)
    return out


def _per_row(value: object, shape: Tuple[int, ...]) -> npt.NDArray[np.generic]:
    """A goal function's result as one value per relabelled row: a batch as it is, one value
    (Fetch's ``compute_terminated`` answers ``False`` for any batch) broadcast."""
    arr = np.asarray(value)
    return arr.reshape(shape) if arr.size == math.prod(shape) else np.broadcast_to(arr, shape)


@dataclass(frozen=True)
class HerConfig(RewardModelConfig):
    """``reward_model`` of a :class:`HerRewardModel`."""

    type: Optional[str] = "her"
    #: (str) where relabelled goals come from: 'future', 'final' or 'episode'.
    her_strategy: str = setting("future", STRATEGIES)
    #: (int) relabelled replays per original one: a drawn transition is relabelled with probability k/(k+1).
    her_replay_k: int = setting(4, "[0, inf)")
    #: (int) transitions drawn from each sampled episode.
    sample_per_episode: int = setting(4, "[1, inf)")


@REWARD_MODEL_REGISTRY.register("her")
class HerRewardModel(BaseRewardModel):
    """Relabels goals of transitions drawn from stored episodes (``estimate``); learns nothing."""

    config_view = HerConfig
    _cfg: HerConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None, env: Optional[object] = None,
                 seed: Optional[int] = None) -> None:
        super().__init__(cfg, env, seed)
        compute_reward = getattr(env, "compute_reward", None)
        if not callable(compute_reward):
            raise ConfigError(f"reward model 'her' needs an env with compute_reward(achieved_goal, desired_goal, info) "
                              f"(Gymnasium-Robotics' GoalEnv), got {type(env).__name__}")
        self._compute_reward: GoalFn = compute_reward
        terminated = getattr(env, "compute_terminated", None)
        self._compute_terminated: Optional[GoalFn] = terminated if callable(terminated) else None
        self._strategy = self._cfg.her_strategy
        k = self._cfg.her_replay_k
        self._p_relabel = k / (k + 1)
        self._per_episode = self._cfg.sample_per_episode
        self._rng = np.random.default_rng(seed)

    def batch_items(self, batch_size: int) -> int:
        """Episodes per learner batch: ceil(batch_size / sample_per_episode)."""
        return math.ceil(batch_size / self._per_episode)

    def estimate(self, batch: Batch) -> Dict[str, object]:
        """Sampled episodes (a list of column dicts, the episode buffer's ``sample_batch``) ->
        ``len(batch) * sample_per_episode`` transitions as one dict of columns, goals relabelled."""
        episodes = self._episodes(batch)
        lengths = np.array([len(ep["action"]) for ep in episodes], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        length = np.repeat(lengths, self._per_episode)
        start = np.repeat(starts, self._per_episode)
        t = (self._rng.random(len(length)) * length).astype(np.int64)
        relabelled = self._rng.random(len(length)) < self._p_relabel
        j = goal_indices(self._strategy, t, length, self._rng)
        columns = _concat(episodes)
        return relabel(columns, start + t, start + j, relabelled, self._compute_reward, self._compute_terminated)

    @staticmethod
    def _episodes(batch: Batch) -> List[Mapping[str, Any]]:
        def is_episode(ep: object) -> bool:  # columns: one array per field, one row per step
            return isinstance(ep, Mapping) and isinstance(ep.get("action"), np.ndarray) and ep["action"].ndim >= 1

        if not (isinstance(batch, Sequence) and batch and all(is_episode(ep) for ep in batch)):
            raise TypeError("HER estimates a list of episodes as columns (EpisodeReplayBuffer.sample_batch): "
                            "use replay_buffer type 'episode' and collector type 'episode'")
        return list(batch)

    def state_dict(self) -> Dict[str, object]:
        """The relabelling RNG (a resumed run draws the same goals)."""
        return {"rng": self._rng.bit_generator.state}

    def load_state_dict(self, state_dict: Mapping[str, object]) -> None:
        self._rng.bit_generator.state = dict(as_mapping(state_dict["rng"], "reward model state 'rng'"))


def _concat(episodes: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """Episodes' columns end to end (dict fields per key)."""
    out: Dict[str, Any] = {}
    for key, value in episodes[0].items():
        if isinstance(value, Mapping):
            out[key] = {k: np.concatenate([ep[key][k] for ep in episodes]) for k in value}
        else:
            out[key] = np.concatenate([np.asarray(ep[key]) for ep in episodes])
    return out
