"""GAIL (Ho & Ermon, 2016): a discriminator tells the expert's (obs, action) from the agent's, and
its opinion replaces the env's reward.

Data: the expert's transitions come from a demonstration dataset (``reward_model.data_path``: a
Minari dataset, see :func:`stride.data.demo.load_demo_dataset`, written by ``stride -m
collect_demo``); the agent's are the transitions of every collect (``collect_data``), kept in a
window of the latest ``agent_buffer_size``. The discriminator sees (obs, action) -- or (obs,
next_obs) with ``input='obs_next_obs'``, for imitation from observations alone -- with the
observations standardised by the expert data's mean and std, and discrete actions one-hot.

Math, with ``D(x) = sigmoid(f(x))`` the probability that ``x`` is the expert's:

* loss (``train``, ``update_per_collect`` Adam steps per collect, each on ``batch_size`` expert and
  ``batch_size`` agent rows): ``-log D(expert) - log(1 - D(agent))`` (binary cross-entropy on the
  logits ``f``);
* reward (``estimate``, on every learner batch, a copy: the replay buffer keeps the env's reward,
  the learner never sees it): ``'positive'``: ``-log(1 - D) = softplus(f) > 0`` (Ho & Ermon's form,
  DI-engine's ``-log(D_agent)``); ``'logit'``: ``log D - log(1 - D) = f`` (AIRL's form, Fu et al.
  2018: no reward for merely surviving nor for ending early, for tasks whose episodes should end).

Better than DI-engine's GAIL on purpose (its known weaknesses: §A.1 of the reference notes, issue
#692 "GAIL much slower than BC on CartPole"): discrete actions are one-hot, not a scalar index fed to
the MLP (``input_size = obs + 1``); inputs are standardised; rewards come from the logits through
``softplus`` (exact, no ``log(D + 1e-8)`` floor); a few discriminator steps per collect instead of
100 over-fitting ones; expert data from a standard dataset checked against the run's env instead
of a pickle; the whole state (discriminator, optimiser, agent window, RNG) in the checkpoint, so a
resumed run continues exactly (DI-engine's restarts its discriminator). Rewards are computed for a
whole batch in one forward. Against the other peers: Tianshou 2.0's ``GAIL`` is a PPO subclass
(on-policy only) that feeds the raw action, unnormalised, next to the observation and reads expert
data from its own replay-buffer format; here any off-policy learner takes the reward (DQN on
CartPole and LunarLander, SAC on Pendulum). SB3 has no GAIL (it moved to ``imitation``, whose 1.0.1
pins Gymnasium 0.29 and SB3 2.2: it cannot share an install with Gymnasium 1.x).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import gymnasium as gym
import numpy as np
import numpy.typing as npt
import torch
import torch.nn.functional as F

from ..config.setting import REQUIRED
from ..config.view import declared, setting
from ..data.demo import DemoDataset, load_demo_dataset
from ..model.common import MLP
from ..torch_utils import adam, step
from ..utils.errors import ConfigError
from ..utils.narrow import as_int, as_mapping
from ..utils.registry import REWARD_MODEL_REGISTRY
from .base import Batch, BaseRewardModel, RewardModelConfig

INPUTS = ("obs_action", "obs_next_obs")
AGENT_ACTIONS = ("env_units", "unit_range")
REWARD_TYPES = ("positive", "logit")


def gail_reward(logit: torch.Tensor, reward_type: str) -> torch.Tensor:
    """The reward for discriminator logits ``f`` (``D = sigmoid(f)``: probability of the expert):
    ``'positive'``: ``-log(1 - D) = softplus(f)``; ``'logit'``: ``log D - log(1 - D) = f``."""
    if reward_type == "positive":
        return F.softplus(logit)
    if reward_type == "logit":
        return logit
    raise ConfigError(f"unknown reward_model.reward_type '{reward_type}'; valid choices: {', '.join(REWARD_TYPES)}")


def discriminator_loss(expert_logit: torch.Tensor, agent_logit: torch.Tensor) -> torch.Tensor:
    """``mean(-log D(expert)) + mean(-log(1 - D(agent)))`` from logits (binary cross-entropy)."""
    return (F.binary_cross_entropy_with_logits(expert_logit, torch.ones_like(expert_logit))
            + F.binary_cross_entropy_with_logits(agent_logit, torch.zeros_like(agent_logit)))


#: a column of observations ``(N, ...)``, or a dict of them (a dict observation space)
Observations = Union[npt.NDArray[np.generic], Mapping[str, npt.NDArray[np.generic]]]


def _flat(obs: Any) -> np.ndarray:
    """Observations (N, ...) or a dict of them -> (N, d) float32 (dict keys in sorted order)."""
    if isinstance(obs, Mapping):
        return np.concatenate([_flat(obs[k]) for k in sorted(obs)], axis=1)
    arr = np.asarray(obs, dtype=np.float32)
    return arr.reshape(len(arr), -1)


@dataclass(frozen=True)
class GailConfig(RewardModelConfig):
    """``reward_model`` of a :class:`GailRewardModel`."""

    type: Optional[str] = "gail"
    #: (str) the expert's demonstrations: a Minari dataset folder or local id (stride -m collect_demo).
    data_path: str = declared(REQUIRED)
    #: (str) what the discriminator sees: 'obs_action' or 'obs_next_obs' (no actions needed).
    input: str = setting("obs_action", INPUTS)
    #: (list) hidden layer sizes of the discriminator MLP.
    hidden_size_list: List[int] = declared([64, 64])
    #: (float) the discriminator's Adam step size.
    learning_rate: float = setting(1e-3, "(0, inf)")
    #: (int) expert rows and agent rows per discriminator step.
    batch_size: int = setting(64, "[1, inf)")
    #: (int) discriminator steps after each collect.
    update_per_collect: int = setting(1, "[0, inf)")
    #: (int) the latest agent transitions the discriminator learns from.
    agent_buffer_size: int = setting(10000, "[1, inf)")
    #: (str) 'positive': -log(1 - D) (> 0); 'logit': log D - log(1 - D) (see the module docstring).
    reward_type: str = setting("positive", REWARD_TYPES)
    #: (str) how the learner's replay holds bounded continuous actions: 'env_units' (as the env takes
    #: them, like the dataset: PPO, A2C) or 'unit_range' (in [-1, 1]: the tanh-squashed SAC, TD3, DDPG).
    agent_actions: str = setting("env_units", AGENT_ACTIONS)


@REWARD_MODEL_REGISTRY.register("gail")
class GailRewardModel(BaseRewardModel):
    """A discriminator between expert and agent transitions; its reward replaces the env's."""

    config_view = GailConfig
    _cfg: GailConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None, env: Optional[object] = None,
                 seed: Optional[int] = None) -> None:
        super().__init__(cfg, env, seed)
        c = self._cfg
        self._input, self._reward_type = c.input, c.reward_type
        self._unit_range = c.agent_actions == "unit_range"
        if not isinstance(c.data_path, str) or c.data_path == REQUIRED:
            raise ConfigError("reward_model.data_path must name the expert's dataset (stride -m collect_demo --out DIR)")
        self._expert: DemoDataset = load_demo_dataset(c.data_path)
        obs_space = getattr(env, "observation_space", None)
        act_space = getattr(env, "action_space", None)
        if isinstance(obs_space, gym.spaces.Space) and isinstance(act_space, gym.spaces.Space):
            self._expert.check_env(obs_space, act_space, _env_id(env))
        self._action_space = self._expert.action_space
        obs = _flat(self._expert.columns["obs"])
        self._obs_mean = obs.mean(0)
        std = obs.std(0)
        self._obs_std = np.where(std < 1e-6, 1.0, std).astype(np.float32)  # constant features stay as they are
        cols = self._expert.columns
        self._expert_x = torch.from_numpy(self._features(cols["obs"], cols["action"], cols["next_obs"], agent=False))
        dim = self._expert_x.shape[1]
        self._net = MLP(dim, [*[int(h) for h in c.hidden_size_list], 1], last_activation=False)
        self._optimizer = adam(self._net.parameters(), lr=c.learning_rate)
        self._rng = np.random.default_rng(seed)
        self._agent = np.zeros((c.agent_buffer_size, dim), dtype=np.float32)  # a ring of feature rows
        self._agent_count, self._agent_pos = 0, 0
        self._last_loss = float("nan")

    # ---- features ----------------------------------------------------------------------------
    def _features(self, obs: Any, action: Any, next_obs: Any, agent: bool = True) -> np.ndarray:
        """(N, d) discriminator inputs: standardised obs and one-hot / [-1, 1]-scaled action (or next
        obs); an ``agent`` row's action is already in [-1, 1] with ``agent_actions='unit_range'``."""
        x = (_flat(obs) - self._obs_mean) / self._obs_std
        if self._input == "obs_next_obs":
            return np.concatenate([x, (_flat(next_obs) - self._obs_mean) / self._obs_std], axis=1).astype(np.float32)
        space, a = self._action_space, np.asarray(action)
        if isinstance(space, gym.spaces.Discrete):
            index = a.reshape(len(x)).astype(np.int64) - int(space.start)
            if index.min(initial=0) < 0 or index.max(initial=0) >= int(space.n):
                raise ValueError(f"GAIL: actions outside the dataset's action space {space}")
            act = np.eye(int(space.n), dtype=np.float32)[index]
        else:
            act = a.reshape(len(x), -1).astype(np.float32)
            bounded = isinstance(space, gym.spaces.Box) and np.all(np.isfinite(space.low)) \
                and np.all(np.isfinite(space.high))
            if isinstance(space, gym.spaces.Box) and bounded and not (agent and self._unit_range):
                low, high = space.low.reshape(-1), space.high.reshape(-1)
                act = (2.0 * (act - low) / np.maximum(high - low, 1e-8) - 1.0).astype(np.float32)  # to [-1, 1]
        return np.concatenate([x, act], axis=1).astype(np.float32)

    def _columns(self, batch: Batch) -> Tuple[Any, Any, Any]:
        """(obs, action, next_obs) of a dict of columns or a list of transition dicts."""
        if isinstance(batch, Mapping):
            return batch["obs"], batch["action"], batch.get("next_obs")
        rows: List[Mapping[str, Any]] = [r for r in batch if isinstance(r, Mapping) and "obs" in r]
        if len(rows) != len(batch):
            raise TypeError("GAIL rewards transitions (dicts with obs, action, next_obs): use the sample collector "
                            "and a transition replay buffer, not episodes")

        def stack(key: str) -> Any:
            values = [r[key] for r in rows]
            if isinstance(values[0], Mapping):
                return {k: np.stack([v[k] for v in values]) for k in values[0]}
            return np.stack([np.asarray(v) for v in values])

        return stack("obs"), stack("action"), stack("next_obs") if self._input == "obs_next_obs" else None

    # ---- the reward-model interface ----------------------------------------------------------
    @torch.no_grad()
    def reward(self, obs: Observations, action: npt.NDArray[np.generic], next_obs: Optional[Observations] = None
               ) -> npt.NDArray[np.float32]:
        """The discriminator's reward (float32, one per row) for these transitions."""
        logit = self._net(torch.from_numpy(self._features(obs, action, next_obs))).squeeze(-1)
        return gail_reward(logit, self._reward_type).numpy().astype(np.float32)

    def estimate(self, batch: Batch) -> Batch:
        """A copy of ``batch`` whose ``reward`` is the discriminator's (the env's is dropped)."""
        rows = None if isinstance(batch, Mapping) else list(batch)
        sample = batch if rows is None else (rows[0] if rows else {})
        if isinstance(sample, Mapping) and ("adv" in sample or "value_gamma" in sample):
            raise ConfigError("GAIL replaces the reward of single transitions after collection; these samples carry "
                              "returns computed from the env's reward (n-step 'value_gamma' or on-policy 'adv'): use an "
                              "off-policy learner with policy.nstep=1")
        if rows is not None and not rows:
            return rows
        reward = self.reward(*self._columns(batch))
        if rows is None:
            assert isinstance(batch, Mapping)
            return {**batch, "reward": reward}
        return [{**r, "reward": float(v)} for r, v in zip(rows, reward)]

    def collect_data(self, data: Sequence[object]) -> None:
        """Add the collect's transitions to the agent window (the oldest rows make room)."""
        rows = [d for d in data if isinstance(d, Mapping)]
        if not rows:
            return
        obs, action, next_obs = self._columns(rows)
        x = self._features(obs, action, next_obs)[-len(self._agent):]
        idx = (self._agent_pos + np.arange(len(x))) % len(self._agent)
        self._agent[idx] = x
        self._agent_pos = int((self._agent_pos + len(x)) % len(self._agent))
        self._agent_count = min(self._agent_count + len(x), len(self._agent))

    def train(self) -> None:
        """``update_per_collect`` discriminator steps, each on ``batch_size`` expert and agent rows."""
        if self._agent_count == 0:
            return
        n = self._cfg.batch_size
        for _ in range(self._cfg.update_per_collect):
            expert = self._expert_x[self._rng.integers(0, len(self._expert_x), n)]
            agent = torch.from_numpy(self._agent[self._rng.integers(0, self._agent_count, n)])
            logits = self._net(torch.cat([expert, agent])).squeeze(-1)
            loss = discriminator_loss(logits[:n], logits[n:])
            params = list(self._net.parameters())
            for p, g in zip(params, torch.autograd.grad(loss, params)):
                p.grad = g
            step(self._optimizer)
            self._last_loss = float(loss.item())

    def clear_data(self) -> None:
        """Forget the agent window."""
        self._agent_count, self._agent_pos = 0, 0

    @property
    def last_loss(self) -> float:
        """The discriminator loss of the last step (nan before the first)."""
        return self._last_loss

    @property
    def discriminator(self) -> torch.nn.Module:
        """The discriminator network (features -> logit)."""
        return self._net

    def state_dict(self) -> Dict[str, object]:
        """Discriminator, optimiser, the agent window and the sampling RNG: a resumed run continues exactly."""
        return {"net": self._net.state_dict(), "optimizer": self._optimizer.state_dict(),
                "agent": torch.from_numpy(self._agent[: self._agent_count].copy()),
                "agent_pos": self._agent_pos, "rng": self._rng.bit_generator.state}

    def load_state_dict(self, state_dict: Mapping[str, object]) -> None:
        net = state_dict["net"]
        opt = state_dict["optimizer"]
        agent = state_dict["agent"]
        if not (isinstance(net, Mapping) and isinstance(opt, Mapping) and isinstance(agent, torch.Tensor)):
            raise TypeError("GAIL reward model state: 'net' and 'optimizer' must be state dicts and 'agent' a tensor")
        self._net.load_state_dict(dict(net))
        self._optimizer.load_state_dict(dict(opt))
        rows = agent.numpy()
        if rows.ndim != 2 or rows.shape[1] != self._agent.shape[1] or len(rows) > len(self._agent):
            raise ValueError(f"GAIL reward model state: agent window of shape {tuple(rows.shape)} does not fit "
                             f"({len(self._agent)}, {self._agent.shape[1]})")
        self._agent[: len(rows)] = rows
        self._agent_count = len(rows)
        self._agent_pos = as_int(state_dict["agent_pos"], "GAIL state 'agent_pos'")
        self._rng.bit_generator.state = dict(as_mapping(state_dict["rng"], "GAIL state 'rng'"))


def _env_id(env: object) -> Optional[str]:
    """The Gymnasium id of a ``GymnasiumEnv`` (None for other envs)."""
    try:
        env_id = getattr(env, "env_id", None)
    except Exception:  # an env whose id property refuses (no Gymnasium id)
        return None
    return env_id if isinstance(env_id, str) else None


__all__: List[str] = ["GailRewardModel", "gail_reward", "discriminator_loss"]
