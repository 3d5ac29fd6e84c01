"""``EpisodeCollector``: collect ``n_episode`` whole episodes (for HER, episodic buffers, demos)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional

from ...utils.errors import ConfigError
from ...utils.registry import COLLECTOR_REGISTRY
from ...policy.modes import CollectMode
from .base import CollectorConfig, SerialCollectorBase

#: one episode: its transitions (or, with ``get_train_sample``, its training samples)
Episode = List[Dict[str, object]]


@dataclass(frozen=True)
class EpisodeCollectorConfig(CollectorConfig):
    """``policy.collect.collector`` of an :class:`EpisodeCollector`."""

    type: str = "episode"
    #: (bool) return each episode's training samples (``get_train_sample``) instead of its transitions.
    get_train_sample: bool = False


@COLLECTOR_REGISTRY.register("episode")
class EpisodeCollector(SerialCollectorBase):
    """Collect by episodes; each returned element is one episode (a list of transitions), or its
    training samples when ``get_train_sample=True``."""

    _extra: List[Episode]  # episodes finished beyond the last call's n_episode

    config_view = EpisodeCollectorConfig
    _cfg: EpisodeCollectorConfig

    def reset_policy(self, policy: Optional[CollectMode] = None) -> None:
        """A new policy (collect mode); ``None`` resets the current one."""
        super().reset_policy(policy)
        if self._policy is not None:
            self._default_n_episode: Optional[int] = self._policy.n_episode

    def collect(self, n_episode: Optional[int] = None, train_iter: int = 0,
                policy_kwargs: Optional[Mapping[str, object]] = None) -> List[Episode]:
        """Run until ``n_episode`` episodes finished; partial episodes carry over to the next call."""
        n_episode = n_episode if n_episode is not None else self._default_n_episode
        if n_episode is None:
            raise ConfigError("collect needs n_episode (argument or policy.collect.n_episode)")
        policy = self._require_policy()
        kwargs = policy_kwargs or {}
        episodes: List[Episode] = self._extra[:n_episode]
        self._extra = self._extra[n_episode:]
        steps = 0
        while len(episodes) < n_episode:
            timesteps, obs, output = self._step_envs(kwargs)
            for env_id, ts in timesteps.items():
                steps += 1
                if ts.info.get("abnormal"):
                    self._traj[env_id] = []
                    self._ep_len[env_id] = 0
                    policy.reset([env_id])
                    continue
                self._traj[env_id].append(policy.process_transition(obs[env_id], output[env_id], ts))
                self._ep_len[env_id] += 1
                if ts.done:
                    episode = self._traj[env_id]
                    self._traj[env_id] = []
                    if self._cfg.get_train_sample:
                        episode = policy.get_train_sample(episode)
                    # an episode finishing in the same step as the last needed one waits for the next call
                    (episodes if len(episodes) < n_episode else self._extra).append(episode)
                    self._record_episode(env_id, ts.info)
                    policy.reset([env_id])
        self._envstep += steps
        self._maybe_log(train_iter)
        return episodes

    def _clear_caches(self) -> None:
        super()._clear_caches()
        self._extra = []
