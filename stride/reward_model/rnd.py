"""Random Network Distillation (Burda et al., 2019, "Exploration by Random Network Distillation").

A fixed, randomly initialised *target* network maps an observation to features; a *predictor*
network is trained to match them on the observations the agent has seen. Its error is high on
observations unlike the ones it was trained on, so it is a novelty bonus: the intrinsic reward of
a transition is the predictor's error on its ``next_obs`` (the state reached).

The paper's three normalisations, each kept as the paper does it:

- **observations** entering both networks: running mean/std (``RunningNorm``, the utility behind
  ``policy.obs_norm``), clipped to ``[-obs_norm_clip, obs_norm_clip]`` (5);
- **intrinsic rewards**: divided by the running std of the *non-episodic discounted intrinsic
  return* ``R_t = intrinsic_discount_factor * R_{t-1} + r_t``, one stream per env (``env_id`` of
  each sample), never reset at an episode end -- so the bonus has a stable scale whatever the
  prediction error's units;
- **advantages**: the intrinsic reward goes into its own column (``reward_key``), never into the
  env's reward; the policy learns it with a second value head and a non-episodic return and
  weights the two advantages (``PPOPolicy`` with ``intrinsic_reward_key``).

Per iteration (the reward-model pipeline): ``collect_data(samples)`` updates the observation and
return statistics with the fresh samples and keeps their ``next_obs``; ``train()`` makes
``epoch_per_collect`` passes of ``batch_size`` minibatches over what is kept; ``estimate(batch)``
adds the normalised intrinsic reward of every sample as ``reward_key``; ``clear_data()`` (every
``clear_buffer_per_iters`` iterations, default 1: the predictor trains on fresh data, as the
paper's) drops the kept observations. The pipeline trains before it estimates, so a batch's
bonus comes from the predictor that has just fitted it (DI-engine's order; the paper takes the
bonus at collection time). Measured on DoorKey-8x8 (``benchmarks/rnd/README.md``): the paper's
order makes the bonus about 4x larger (the return std is taken from the same pre-training
errors), yet seeds 0 and 1 then found no reward within 300 k env steps, where this order solves
seed 0 at 171 k. A plausible reason, not proven: fitting the batch first discounts the states a
batch repeats, a within-batch count effect (seed 1's greedy policy under the paper's order stands
still: 1 % forward moves, 63 % pickup / drop / toggle of the key). The whole state -- both
networks, the optimiser, both running statistics, each env's running return, the kept data and
the minibatch RNG -- is in ``state_dict``: a resumed run continues exactly.

Better than DI-engine on purpose: its RND example never calls ``train`` (issue #676), so its
predictor never learns and the "bonus" is noise; its reward is min-max normalised *within each
batch* (every batch then has a sample with bonus 1, however familiar everything is) and added to
the env's reward with a fixed weight, with no separate value head; its MiniGrid config's stop
value (20) can never be reached. Here the predictor is trained every iteration, the bonus has the
paper's scale, the policy keeps the two returns apart, and the MiniGrid config stops on success.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np
import torch
from torch import nn

from ..config.setting import REQUIRED
from ..config.view import declared, setting
from ..model.common import build_encoder
from ..model.common.encoder import MLP
from ..model.common.normalize import RunningNorm
from ..torch_utils import adam, step, zero_grad
from ..utils.errors import ConfigError
from ..utils.narrow import as_mapping
from ..utils.registry import REWARD_MODEL_REGISTRY
from .base import Batch, BaseRewardModel, RewardModelConfig


class RndNetworks(nn.Module):
    """Target (fixed) and predictor (trained) networks over normalised observations, and the
    running statistics of the observations and of the intrinsic return (buffers of this module, so
    its ``state_dict`` holds them)."""

    def __init__(self, obs_shape: int | Sequence[int], hidden_size_list: Sequence[int], output_size: int,
                 obs_norm_clip: float) -> None:
        super().__init__()
        encoder = build_encoder(obs_shape, None, hidden_size_list, "relu")
        self.target = nn.Sequential(encoder, nn.Linear(encoder.output_size, output_size))
        # the predictor is deeper than the target (the paper's choice): it can fit it, not copy it
        encoder = build_encoder(obs_shape, None, hidden_size_list, "relu")
        size = encoder.output_size
        self.predictor = nn.Sequential(encoder, MLP(size, [size], "relu"), nn.Linear(size, output_size))
        self.target.requires_grad_(False)
        self.obs_norm = RunningNorm(obs_shape, clip=obs_norm_clip)
        self.return_stats = RunningNorm(1)

    def error(self, obs: torch.Tensor) -> torch.Tensor:
        """Per-sample mean squared error of the predictor against the target, ``(B,)``."""
        x = self.obs_norm.normalize(obs)
        diff: torch.Tensor = self.predictor(x) - self.target(x)
        return diff.pow(2).mean(1)


@dataclass(frozen=True)
class RndConfig(RewardModelConfig):
    """``reward_model`` of an :class:`RndRewardModel`."""

    type: Optional[str] = "rnd"
    #: (int) clear the kept observations every this many iterations (1: train on fresh data only).
    clear_buffer_per_iters: int = setting(1, "[0, inf)")
    #: (int|list) the observation's shape (as policy.model.obs_shape).
    obs_shape: Union[int, List[int]] = declared(REQUIRED)
    #: (list) hidden sizes of both networks' MLP encoder (image observations use the conv encoder).
    hidden_size_list: List[int] = declared([256, 256])
    #: (int) size of the target's random features.
    output_size: int = setting(128, "[1, inf)")
    #: (float) predictor's Adam step size.
    learning_rate: float = setting(1e-4, "(0, inf)")
    #: (int) predictor minibatch size.
    batch_size: int = setting(64, "[1, inf)")
    #: (int) passes over the kept observations per train().
    epoch_per_collect: int = setting(4, "[1, inf)")
    #: (float) normalised observations are clipped to [-obs_norm_clip, obs_norm_clip] (paper: 5).
    obs_norm_clip: float = setting(5.0, "(0, inf)")
    #: (float) discount of the running intrinsic return whose std scales the bonus (paper: 0.99).
    intrinsic_discount_factor: float = setting(0.99, "(0, 1]")
    #: (str) the column estimate() adds (the env's 'reward' is never touched).
    reward_key: str = "intrinsic_reward"


@REWARD_MODEL_REGISTRY.register("rnd")
class RndRewardModel(BaseRewardModel):
    """RND novelty bonus as its own reward column (see the module docstring)."""

    config_view = RndConfig
    _cfg: RndConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None, env: Optional[object] = None,
                 seed: Optional[int] = None) -> None:
        super().__init__(cfg, env, seed)
        c = self._cfg
        shape: object = c.obs_shape  # (REQUIRED where the user gave none)
        if not (isinstance(shape, int) or (isinstance(shape, (list, tuple)) and all(isinstance(s, int) for s in shape))):
            raise ConfigError(f"reward_model.obs_shape must be an int or a list of ints (as policy.model.obs_shape), "
                              f"got {'nothing' if shape == REQUIRED else repr(shape)}")
        hidden = [int(h) for h in c.hidden_size_list]
        if not hidden or min(hidden) < 1:
            raise ConfigError(f"reward_model.hidden_size_list must be a non-empty list of sizes >= 1, got {hidden!r}")
        with torch.random.fork_rng(devices=[]):  # the networks come from this model's seed, not the global RNG
            torch.manual_seed(0 if seed is None else seed)
            self.networks = RndNetworks(shape, hidden, c.output_size, c.obs_norm_clip)
        self._optimizer = adam(self.networks.predictor.parameters(), lr=c.learning_rate)
        self._rng = torch.Generator().manual_seed(0 if seed is None else seed)
        self._gamma = c.intrinsic_discount_factor
        self.reward_key = c.reward_key
        self._returns: Dict[int, float] = {}  # each env's running intrinsic return (never reset)
        self._data: List[torch.Tensor] = []

    # ---- data and training -------------------------------------------------------------------
    def collect_data(self, data: Sequence[object]) -> None:
        """Update the observation statistics with the fresh ``next_obs``, then the return
        statistics with each env's running intrinsic return, and keep the observations for :meth:`train`."""
        samples = _samples(data)
        if not samples:
            return
        obs = _next_obs(samples)
        self.networks.obs_norm.update(obs)
        with torch.no_grad():
            errors = self.networks.error(obs).tolist()
        if any("env_id" not in s for s in samples):
            raise ConfigError("reward model 'rnd' needs each sample's 'env_id' (its intrinsic return runs per env): "
                              "use PPOPolicy with policy.intrinsic_reward_key set")
        env_ids = [int(np.asarray(s["env_id"])) for s in samples]
        returns = running_returns(errors, env_ids, self._gamma, self._returns)
        self.networks.return_stats.update(torch.tensor(returns, dtype=torch.float64).reshape(-1, 1))
        self._data.append(obs)

    def train(self) -> None:
        """``epoch_per_collect`` passes of shuffled minibatches over the kept observations."""
        if not self._data:
            return
        obs = torch.cat(self._data)
        for _ in range(self._cfg.epoch_per_collect):
            for idx in torch.split(torch.randperm(len(obs), generator=self._rng), self._cfg.batch_size):
                loss = self.networks.error(obs[idx]).mean()
                zero_grad(self._optimizer)
                torch.autograd.backward(loss)
                step(self._optimizer)

    def clear_data(self) -> None:
        self._data = []

    def intrinsic_reward(self, next_obs: torch.Tensor) -> torch.Tensor:
        """The normalised bonus of observations ``next_obs`` ``(B, *obs_shape)``: the predictor's
        error divided by the running std of the intrinsic return, ``(B,)`` float32."""
        with torch.no_grad():
            std = torch.sqrt(self.networks.return_stats.var + 1e-8).to(torch.float32)
            return self.networks.error(next_obs) / std

    def estimate(self, batch: Batch) -> Batch:
        """The batch with ``reward_key`` added to every sample (a list of sample dicts) or as a column
        (a dict of columns); the samples are shallow copies, ``reward`` is left as collected."""
        if isinstance(batch, Mapping):
            bonus = self.intrinsic_reward(torch.as_tensor(np.asarray(batch["next_obs"])))
            return {**batch, self.reward_key: bonus.numpy()}
        samples = _samples(batch)
        if not samples:
            return []
        rewards = self.intrinsic_reward(_next_obs(samples)).tolist()
        return [{**s, self.reward_key: r} for s, r in zip(samples, rewards)]

    # ---- state -------------------------------------------------------------------------------
    def state_dict(self) -> Dict[str, object]:
        ids = sorted(self._returns)
        return {"networks": self.networks.state_dict(), "optimizer": self._optimizer.state_dict(),
                "rng": self._rng.get_state(), "return_env_ids": ids,
                "return_values": [self._returns[i] for i in ids], "data": list(self._data)}

    def load_state_dict(self, state_dict: Mapping[str, object]) -> None:
        sd: Mapping[str, Any] = as_mapping(state_dict, "reward model state")
        self.networks.load_state_dict(sd["networks"])
        self._optimizer.load_state_dict(sd["optimizer"])
        self._rng.set_state(sd["rng"])
        self._returns = {int(i): float(v) for i, v in zip(sd["return_env_ids"], sd["return_values"])}
        self._data = [torch.as_tensor(d) for d in sd["data"]]


def running_returns(rewards: Sequence[float], env_ids: Sequence[int], gamma: float,
                    carry: Dict[int, float]) -> List[float]:
    """The non-episodic discounted return ``R_t = gamma * R_{t-1} + r_t`` at each of ``rewards``
    (in time order within each env), one stream per env id, continuing from ``carry`` (each env's
    last return; updated in place). Episode ends do not reset it: RND's return is non-episodic."""
    out = []
    for r, env_id in zip(rewards, env_ids):
        ret = gamma * carry.get(env_id, 0.0) + float(r)
        carry[env_id] = ret
        out.append(ret)
    return out


def _samples(data: Sequence[object]) -> List[Mapping[str, object]]:
    samples = [d for d in data if isinstance(d, Mapping)]
    if len(samples) != len(data):
        raise ConfigError("reward model 'rnd' takes samples (dicts with 'next_obs'): use the sample collector")
    return samples


def _next_obs(samples: Sequence[Mapping[str, object]]) -> torch.Tensor:
    obs = torch.as_tensor(np.stack([np.asarray(s["next_obs"]) for s in samples]))
    return obs.float() if obs.dtype == torch.float64 else obs
