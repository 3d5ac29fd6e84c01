"""What both serial collectors share: policy/env plumbing, counters, episode statistics, logs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Sequence, Tuple, cast

import gymnasium as gym

import numpy as np
import torch

from ...config.config import Configurable
from ...config.view import ConfigView, setting
from ...utils.log import build_logger
from ...envs.base_env import BaseEnvTimestep
from ...envs.sample_transforms import SampleTransform
from ...policy.modes import CollectMode
from ...utils.errors import ConfigError, StrideError
from ...utils.registry import COLLECTOR_REGISTRY
from ...utils.narrow import as_int, as_list, as_mapping
from ..protocols import EnvManager, ScalarWriter, Stateful

#: what one batched step gives back: timesteps, and the observation and policy output behind each, by env id
StepResult = Tuple[Dict[int, BaseEnvTimestep], Dict[int, Any], Dict[int, Dict[str, Any]]]


def to_plain(obj: object) -> object:
    """Arrays -> tensors, NumPy scalars -> Python numbers (checkpoint-safe), recursively."""
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj))
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {k: to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    return obj


def from_plain(obj: object) -> object:
    if isinstance(obj, torch.Tensor):
        return obj.numpy()
    if isinstance(obj, dict):
        return {k: from_plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [from_plain(v) for v in obj]
    return obj


@dataclass(frozen=True)
class CollectorConfig(ConfigView):
    """``policy.collect.collector``: what every serial collector reads."""

    #: the registered collector name
    type: str = "sample"
    #: (int) log episode statistics every this many train iterations.
    collect_print_freq: int = setting(100, "[1, inf)")


class SerialCollectorBase(Configurable):
    """Owns an env manager and a policy's collect mode; counts env steps and episodes.
    ``sample_transforms``: what the env family does to its samples (the entries take them from
    ``BaseEnv.sample_transforms``); a collector that cannot apply them refuses them."""

    #: whether :meth:`collect` applies ``sample_transforms`` (an episode is not a sample: no)
    takes_sample_transforms: ClassVar[bool] = False

    config_view = CollectorConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None, env: Optional[EnvManager] = None,
                 policy: Optional[CollectMode] = None, tb_logger: Optional[ScalarWriter] = None,
                 exp_name: Optional[str] = None, instance_name: str = "collector",
                 sample_transforms: Sequence[SampleTransform] = ()) -> None:
        if sample_transforms and not self.takes_sample_transforms:
            raise ConfigError(f"{type(self).__name__} applies no sample transforms (the env's, e.g. env.mirror=True); "
                              "valid choices: collector type 'sample', or no transforms")
        self._sample_transforms = list(sample_transforms)
        self._cfg = self.typed_config(CollectorConfig, cfg, prefix="policy.collect.collector.")
        self._tb = tb_logger
        self._logger = build_logger(exp_name, instance_name)
        self._instance_name = instance_name
        self._env: Optional[EnvManager] = None
        self._policy: Optional[CollectMode] = None
        self._on_policy = False
        self._envstep = 0
        self._episode_count = 0
        self._total_episode_count = 0
        self._returns: List[float] = []
        self._lengths: List[int] = []
        self._last_log_iter = -1
        self.reset(policy, env)

    # ---- resets (the seeds' interface) -------------------------------------------------------
    def _require_env(self) -> EnvManager:
        if self._env is None:
            raise StrideError(f"{type(self).__name__} has no env manager: give one to reset_env()")
        return self._env

    def _require_policy(self) -> CollectMode:
        if self._policy is None:
            raise StrideError(f"{type(self).__name__} has no policy: give one to reset_policy()")
        return self._policy

    def reset_env(self, env: Optional[EnvManager] = None) -> None:
        """A new env manager is launched; ``None`` resets the current one."""
        if env is not None:
            self._env = env
            if env.closed:
                env.launch()
            else:
                env.reset()
        elif self._env is not None:
            self._env.reset()
        self._clear_caches()

    def reset_policy(self, policy: Optional[CollectMode] = None) -> None:
        """A new policy (collect mode); ``None`` resets the current one."""
        if policy is not None:
            self._policy = policy
        if self._policy is not None:
            self._policy.reset()
            self._on_policy = self._policy.on_policy

    def reset(self, policy: Optional[CollectMode] = None, env: Optional[EnvManager] = None) -> None:
        """``reset_env(env)`` then ``reset_policy(policy)``."""
        if env is not None or self._env is not None:
            self.reset_env(env)
        self.reset_policy(policy)
        self._clear_caches()

    def _clear_caches(self) -> None:
        n = self._env.env_num if self._env is not None else 0
        self._traj: Dict[int, List[Dict[str, Any]]] = {i: [] for i in range(n)}
        self._ep_len: Dict[int, int] = {i: 0 for i in range(n)}
        self._inflight: Dict[int, List[Tuple[Any, Dict[str, Any]]]] = {}

    def _step_envs(self, kwargs: Mapping[str, object]) -> StepResult:
        """One batched forward over the ready envs and one manager step.

        Returns ``(timesteps, obs, outputs)``: for each timestep's env, the observation and policy
        output that produced it. A synchronous manager answers exactly what was sent; an
        asynchronous one may answer actions sent in an earlier call (and show an env as ready
        again before its previous result came back), so unanswered sends are kept, oldest first.
        """
        env = self._require_env()
        obs = dict(env.ready_obs)
        inflight = self._inflight
        output: Dict[int, Dict[str, Any]]
        if obs:
            output = self._require_policy().forward(obs, **kwargs)
            actions = {i: out["action"] for i, out in output.items()}
        elif inflight:
            output, actions = {}, {}  # every env is busy: wait for results
        else:
            raise RuntimeError("collector: no env is ready and none is running (all envs done?)")
        timesteps = env.step(actions)
        if not inflight and timesteps.keys() == obs.keys():
            return timesteps, obs, output  # the synchronous case: no bookkeeping
        for env_id, o in obs.items():
            inflight.setdefault(env_id, []).append((o, output[env_id]))
        src_obs: Dict[int, Any] = {}
        src_out: Dict[int, Dict[str, Any]] = {}
        for env_id in timesteps:
            sent = inflight[env_id]
            src_obs[env_id], src_out[env_id] = sent.pop(0)
            if not sent:
                del inflight[env_id]
        return timesteps, src_obs, src_out

    def collect(self, *, train_iter: int = 0, policy_kwargs: Optional[Mapping[str, object]] = None) -> Sequence[object]:
        """Step the envs until the configured amount of data is ready (see the subclasses)."""
        raise NotImplementedError

    # ---- counters ----------------------------------------------------------------------------
    @property
    def envstep(self) -> int:
        return self._envstep

    @envstep.setter
    def envstep(self, value: int) -> None:
        self._envstep = int(value)

    @property
    def action_space(self) -> gym.spaces.Space[object]:
        """The env manager's action space."""
        return self._require_env().action_space

    @property
    def episode_count(self) -> int:
        return self._total_episode_count

    def _record_episode(self, env_id: int, info: Dict[str, Any]) -> None:
        self._returns.append(float(info.get("eval_episode_return", np.nan)))
        self._lengths.append(self._ep_len[env_id])
        self._ep_len[env_id] = 0
        self._total_episode_count += 1

    def episode_stats(self) -> Dict[str, float]:
        """Return/length statistics of the episodes finished since the last log."""
        if not self._returns:
            return {}
        r = np.asarray(self._returns)
        return {"episode_count": len(r), "reward_mean": float(r.mean()), "reward_std": float(r.std()),
                "reward_max": float(r.max()), "reward_min": float(r.min()),
                "episode_length_mean": float(np.mean(self._lengths))}

    def _maybe_log(self, train_iter: int) -> None:
        if train_iter - self._last_log_iter < self._cfg.collect_print_freq and self._last_log_iter >= 0:
            return
        stats = self.episode_stats()
        if not stats:
            return
        self._last_log_iter = train_iter
        self._logger.info(
            f"[{self._instance_name}] train_iter={train_iter} envstep={self._envstep} "
            + " ".join(f"{k}={v:.4g}" for k, v in stats.items())
        )
        if self._tb is not None:
            for k, v in stats.items():
                self._tb.add_scalar(f"{self._instance_name}_iter/{k}", v, train_iter)
                self._tb.add_scalar(f"{self._instance_name}_step/{k}", v, self._envstep)
        self._returns, self._lengths = [], []

    # ---- checkpointing -----------------------------------------------------------------------
    def state_dict(self) -> Dict[str, object]:
        """Counters, partial trajectories and the env manager's in-flight episodes (plain values)."""
        return {
            "envstep": self._envstep,
            "total_episode_count": self._total_episode_count,
            "traj": {str(k): to_plain(v) for k, v in self._traj.items()},
            "ep_len": {str(k): v for k, v in self._ep_len.items()},
            # observations and outputs sent whose transitions have not come back yet (an agent of a
            # turn-based game waits for its next turn): a resumed run needs them to close those transitions
            "inflight": {str(k): to_plain(v) for k, v in self._inflight.items()},
            "env": self._env.state_dict() if isinstance(self._env, Stateful) else None,
            "policy": None if self._policy is None else to_plain(self._policy.episode_state()),
        }

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self._envstep = as_int(state["envstep"], "collector state 'envstep'")
        self._total_episode_count = as_int(state["total_episode_count"], "collector state 'total_episode_count'")
        traj = as_mapping(state["traj"], "collector state 'traj'")
        self._traj = {int(k): cast(List[Dict[str, Any]], from_plain(v)) for k, v in traj.items()}
        ep_len = as_mapping(state["ep_len"], "collector state 'ep_len'")
        self._ep_len = {int(k): as_int(v, "collector state 'ep_len'") for k, v in ep_len.items()}
        inflight = as_mapping(state.get("inflight", {}), "collector state 'inflight'")  # older checkpoints: none
        self._inflight = {int(k): [cast(Tuple[Any, Dict[str, Any]], tuple(as_list(x, "an in-flight send")))
                                   for x in as_list(from_plain(v), "collector state 'inflight'")]
                          for k, v in inflight.items()}
        episode_state = state.get("policy")  # a recurrent policy's per-env states (older checkpoints: none)
        if episode_state is not None:
            self._require_policy().load_episode_state(cast(Dict[str, Any], from_plain(episode_state)))
        env: object = self._env  # a manager's state is optional: kept where it has one
        env_state = state.get("env")
        if env_state is not None and isinstance(env, Stateful):
            env.load_state_dict(as_mapping(env_state, "collector state 'env'"))

    def close(self) -> None:
        if self._env is not None:
            self._env.close()


def create_collector(cfg: Mapping[str, object], env: EnvManager, policy: CollectMode, tb_logger: Optional[ScalarWriter] = None,
                     exp_name: Optional[str] = None, instance_name: str = "collector",
                     sample_transforms: Sequence[SampleTransform] = ()) -> SerialCollectorBase:
    """Build the collector named by ``cfg['type']`` (``sample_transforms``: the env family's, see
    :class:`SerialCollectorBase`)."""
    return COLLECTOR_REGISTRY.build_as(SerialCollectorBase, str(cfg.get("type", "sample")), cfg, env, policy,
                                       tb_logger=tb_logger, exp_name=exp_name, instance_name=instance_name,
                                       sample_transforms=sample_transforms)
