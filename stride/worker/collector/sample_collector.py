"""``SampleCollector``: collect exactly ``n_sample`` training samples.

One batched policy forward per step over all ready envs. A segment of an env's trajectory is
turned into samples when its episode ends or it reaches ``traj_len`` (a multiple of the policy's
``unroll_len``, so a policy that trains on unrolls, like IMPALA, gets whole ones mid-episode); with n-step policies the
last ``lookahead`` transitions stay for the next segment, so no n-step window is cut at a
segment boundary (DI-engine cuts them). Of a mid-episode segment's samples, those that start
before the kept transitions are taken (sample ``j`` starts at transition ``j * unroll_len``: an
n-step transition at ``j``, an R2D2 sequence at ``j * unroll_len``, whose burn-in and n-step rows
are the ``lookahead``). Surplus samples are kept for the next call (DI drops
them) -- except for on-policy policies, whose samples must all come from the current weights:
their partial segments are emitted at the end of every call. An abnormal episode (crashed env) is
discarded, never stitched to the next one.

Sample transforms (``sample_transforms``: what an env family does to its samples, e.g. PettingZoo's
board games add each sample mirrored left-right; :mod:`stride.envs.sample_transforms`) apply to
the samples a call returns, in order; off-policy policies only. The collector knows no game.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, cast

from ...utils.errors import ConfigError
from ...utils.registry import COLLECTOR_REGISTRY
from ...policy.modes import CollectMode
from .base import CollectorConfig, SerialCollectorBase


@dataclass(frozen=True)
class SampleCollectorConfig(CollectorConfig):
    """``policy.collect.collector`` of a :class:`SampleCollector`: the common settings (what an env
    family does to its samples, e.g. the board games' mirror, comes as ``sample_transforms``)."""


@COLLECTOR_REGISTRY.register("sample")
class SampleCollector(SerialCollectorBase):
    """Collect by samples (transitions)."""

    #: applies the sample transforms it is given to the samples it returns
    takes_sample_transforms = True

    config_view = SampleCollectorConfig
    _cfg: SampleCollectorConfig

    def reset_policy(self, policy: Optional[CollectMode] = None, keep_samples: bool = False) -> None:
        """A new policy (collect mode); ``None`` resets the current one. ``keep_samples``: the
        samples collected beyond the last call's ``n_sample`` stay for the next call (a change of
        actions within one off-policy data stream: the random warm-up's collects, one at a time)."""
        super().reset_policy(policy)
        if policy is not None and not (keep_samples and hasattr(self, "_surplus")):
            self._surplus: List[Dict[str, Any]] = []  # samples of another policy (e.g. random warm-up) must not leak into this one's
        if self._policy is not None:
            self._default_n_sample: Optional[int] = self._policy.n_sample
            self._lookahead, self._unroll_len = self._policy.lookahead, self._policy.unroll_len

    def _clear_caches(self) -> None:
        super()._clear_caches()
        self._surplus = []

    def collect(self, n_sample: Optional[int] = None, train_iter: int = 0,
                policy_kwargs: Optional[Mapping[str, object]] = None) -> List[Dict[str, object]]:
        """Step the envs until ``n_sample`` training samples are ready and return exactly that many
        (on-policy: every sample collected in this call, at least ``n_sample``, none kept back),
        through the sample transforms."""
        n_sample = n_sample if n_sample is not None else self._default_n_sample
        if n_sample is None:
            raise ConfigError("collect needs n_sample (argument or policy.collect.n_sample)")
        env = self._require_env()
        if self._on_policy and self._sample_transforms:
            names = ", ".join(getattr(t, "__name__", repr(t)) for t in self._sample_transforms)
            raise ConfigError(f"sample transforms ({names}) need an off-policy policy (on-policy samples carry the "
                              "collecting policy's log-probabilities); valid choices: no transforms (env.mirror=False)")
        # a segment holds whole unrolls: n_sample counts train samples, unroll_len transitions each
        traj_len = self._unroll_len * max(1, math.ceil(n_sample / env.env_num))
        self._envstep += self._step_until(n_sample, traj_len + self._lookahead, policy_kwargs or {})
        self._maybe_log(train_iter)
        if self._on_policy:
            return self._emit_all()
        samples = self._surplus
        self._surplus = samples[n_sample:]
        out = samples[:n_sample]
        for transform in self._sample_transforms:
            out = transform(out)
        return out

    def _step_until(self, n_sample: int, cut: int, kwargs: Mapping[str, object]) -> int:
        """Step the envs until ``n_sample`` samples wait in the surplus (on-policy: ``n_sample`` env
        steps), cutting a segment at ``cut`` transitions; returns the env steps taken."""
        policy = self._require_policy()
        lookahead, unroll_len = self._lookahead, self._unroll_len
        samples = self._surplus
        trajs, ep_len = self._traj, self._ep_len
        process, get_samples = policy.process_transition, policy.get_train_sample
        steps = 0
        on_policy = self._on_policy
        while (steps if on_policy else len(samples)) < n_sample:  # on-policy: n_sample env steps, all emitted later
            timesteps, obs, output = self._step_envs(kwargs)
            steps += len(timesteps)
            for env_id, ts in timesteps.items():
                if ts.done and ts.info.get("abnormal"):  # the env crashed mid-episode: drop the episode
                    trajs[env_id] = []
                    ep_len[env_id] = 0
                    policy.reset([env_id])
                    continue
                traj = trajs[env_id]
                traj.append(process(obs[env_id], output[env_id], ts))
                ep_len[env_id] += 1
                if ts.done:
                    samples.extend(get_samples(traj))
                    trajs[env_id] = []
                    self._record_episode(env_id, ts.info)
                    policy.reset([env_id])
                elif len(traj) >= cut:
                    new = get_samples(traj)
                    if lookahead:
                        samples.extend(new[: -(-(len(traj) - lookahead) // unroll_len)])
                        trajs[env_id] = traj[-lookahead:]
                    else:
                        samples.extend(new)
                        trajs[env_id] = []
        return steps

    def _emit_all(self) -> List[Dict[str, object]]:
        """On-policy data must come from the current weights only: every sample collected, with
        every partial segment's (a mid-episode segment bootstraps from its last next_obs); nothing kept."""
        samples, get_samples = self._surplus, self._require_policy().get_train_sample
        for env_id, traj in self._traj.items():
            if traj:
                samples.extend(get_samples(traj))
                self._traj[env_id] = []
        self._surplus = []
        return samples

    def state_dict(self) -> Dict[str, object]:
        from .base import to_plain

        state = super().state_dict()
        state["surplus"] = to_plain(self._surplus)
        return state

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        from .base import from_plain

        super().load_state_dict(state)
        self._surplus = cast(List[Dict[str, Any]], from_plain(state.get("surplus", [])))
