"""IMPALA (Espeholt et al., 2018, "IMPALA: Scalable Distributed Deep-RL with Importance Weighted
Actor-Learner Architectures"): an actor-critic trained off-policy on unrolls of ``unroll_len``
steps, corrected by v-trace for the lag between the collecting (behaviour) and learning policies.

Math: ``stride.rl_utils.vtrace_error`` (v-trace targets, policy-gradient advantages, the loss).
Collect mode samples from the policy and records the behaviour log-prob of each action; a train
sample is one unroll as plain arrays: ``obs`` ``[T + 1, ...]`` (the last is the bootstrap
observation), ``action``, ``log_prob``, ``reward``, ``done`` (terminated) and ``mask`` ``[T]``.
Learn mode runs one forward over all ``T + 1`` observations of a batch of unrolls and one gradient
step (policy gradient + ``value_weight`` * value - ``entropy_weight`` * entropy, grad-norm clip).
The serial off-policy pipeline runs it unchanged: a replay buffer with ``max_use`` between collector
and learner, as DI-engine does; weights move as ``state_dict``s, so Ray actors can host every mode.
Discrete (categorical) and continuous (diagonal Gaussian) actions, from ``model.action_space``.

Defaults are DI-engine's (``ding/policy/impala.py``): unroll 32, batch 16, 4 updates per collect,
Adam lr 5e-4, value weight 0.5, entropy 1e-4, gamma 0.99, lambda 0.95, all ratio clips 1.0,
a buffer of 1,000 unrolls with ``max_use`` 16; gradient-norm clip 40 is the paper's (DI has none).

Better than the peers on purpose:
- Truncation is not termination: an episode cut by a time limit bootstraps from the value of its
  true final observation (it is the unroll's next observation), a terminated one never does
  (DI-engine's and RLlib's IMPALA treat both as ``done``).
- An episode that ends inside an unroll is exact: the unroll is padded and masked, the padded steps
  have ratio 0, so they change neither the targets nor the loss means (DI-engine pads with copies
  of the last transition and trains on them; RLlib zero-pads and relies on the done flags).
- Mid-episode unrolls are whole: the collector cuts segments at multiples of ``unroll_len``, and
  every unroll carries its own bootstrap observation (no overlapping next-obs copies stored).
- v-trace is a pure function tested against a slow reference implementation and by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence

import numpy as np
import torch

from ..config.view import declared, setting, subsection
from ..rl_utils import policy_distribution, vtrace_error
from ..rl_utils.schedule import Scheduled
from ..torch_utils import adam
from ..torch_utils.replica_sync import optimise
from ..utils.errors import ConfigError
from ..utils.registry import POLICY_REGISTRY
from .base_policy import is_terminated
from .ppo import ActorCriticConfig, ActorCriticLearnConfig, ActorCriticPolicy
from .views import PolicyCollectConfig, PolicyOtherConfig, ScheduleValue


def _stack(items: Sequence[Any]) -> Any:
    """Observations stacked on a new first axis (dict observations key by key)."""
    if isinstance(items[0], Mapping):
        return {k: np.stack([item[k] for item in items]) for k in items[0]}
    return np.stack(items)


def _time_major(x: Any, batch: int, length: int) -> Any:
    """``[B * L, ...]`` rows -> ``[L, B, ...]`` (a Gaussian's ``{'mu', 'sigma'}`` entry by entry)."""
    if isinstance(x, dict):
        return {k: _time_major(v, batch, length) for k, v in x.items()}
    return x.reshape(batch, length, *x.shape[1:]).transpose(0, 1)


def _flat(obs: Any) -> Any:
    """``[B, L, ...]`` observations -> ``[B * L, ...]`` (dict observations key by key)."""
    if isinstance(obs, dict):
        return {k: _flat(v) for k, v in obs.items()}
    return obs.reshape(-1, *obs.shape[2:])


@dataclass(frozen=True)
class IMPALALearnConfig(ActorCriticLearnConfig):
    # (int) gradient steps after each collect.
    update_per_collect: int = setting(4, "[1, inf)")
    # (int) unrolls per gradient step.
    batch_size: int = setting(16, "[1, inf)")
    # (str) 'adam' (DI-engine's) or 'rmsprop' (the paper's: decay 0.99, no momentum; eps 1e-5, see _init_learn).
    optimizer: str = setting("adam", ("adam", "rmsprop"))
    # (float|schedule) step size, value-loss and entropy weights (schedules: stride.rl_utils.schedule).
    learning_rate: ScheduleValue = setting(Scheduled(5e-4, "(0, inf)"))
    value_weight: ScheduleValue = setting(Scheduled(0.5, "[0, inf)"))
    entropy_weight: ScheduleValue = setting(Scheduled(1e-4, "[0, inf)"))
    # (float|None) upper clip of the importance ratio in v-trace's TD errors (rho-bar; None: no clip).
    rho_clip: Optional[float] = setting(1.0, "(0, inf)", optional=True)
    # (float|None) upper clip of the ratio in the traces (c-bar; None: no clip).
    c_clip: Optional[float] = setting(1.0, "(0, inf)", optional=True)
    # (float|None) upper clip of the ratio in the policy-gradient advantage (None: no clip).
    rho_pg_clip: Optional[float] = setting(1.0, "(0, inf)", optional=True)
    # (float|None) clip the gradient norm to this value.
    grad_clip_norm: Optional[float] = setting(40.0, "(0, inf)", optional=True)


@dataclass(frozen=True)
class IMPALACollectConfig(PolicyCollectConfig):
    # (int) unrolls per collect.
    n_sample: Optional[int] = setting(None, "[1, inf)", kind=int)
    # (int) env steps per unroll (a train sample).
    unroll_len: int = setting(32, "[1, inf)")


@dataclass(frozen=True)
class IMPALAOtherConfig(PolicyOtherConfig):
    # unrolls kept for replay; each is trained on at most max_use times (DI-engine's 16)
    replay_buffer: Mapping[str, object] = declared(dict(replay_buffer_size=1000, max_use=16))


@dataclass(frozen=True)
class IMPALAConfig(ActorCriticConfig):
    type: str = "impala"
    on_policy: bool = False
    # (float) v-trace's trace weight lambda (1.0: the paper's v-trace).
    lambda_: float = setting(0.95, "[0, 1]")
    learn: IMPALALearnConfig = subsection(IMPALALearnConfig)
    collect: IMPALACollectConfig = subsection(IMPALACollectConfig)
    other: IMPALAOtherConfig = subsection(IMPALAOtherConfig)


@POLICY_REGISTRY.register("impala")
class IMPALAPolicy(ActorCriticPolicy):
    """IMPALA with v-trace; collect samples from the policy, eval takes the argmax / the Gaussian mean
    (the actor-critic eval mode, inherited with the action-space handling; nothing else is)."""

    config_view = IMPALAConfig
    _typed: IMPALAConfig

    def _check_config(self) -> None:
        if self._typed.random_collect_size:
            raise ConfigError(f"policy.random_collect_size={self._typed.random_collect_size} is not supported by impala "
                              "(v-trace needs the log-probs of the policy that collected); valid choices: 0")

    # ---- learn -------------------------------------------------------------------------------
    def _init_learn(self) -> None:
        self._check_config()
        self._init_shared()
        cfg = self._typed.learn
        params, lr = self._model.parameters(), self._schedules.value("learn.learning_rate")
        if cfg.optimizer == "adam":
            self._optimizer = adam(params, lr=lr)
        elif cfg.optimizer == "rmsprop":
            # the paper's eps 0.01 is for a loss summed over batch and time; this loss is their mean
            # (an unroll-count-free learning rate), so eps shrinks by the same ~600x: 1e-5, as in Stride's A2C
            self._optimizer = torch.optim.RMSprop(params, lr=lr, alpha=0.99, eps=1e-5)
        else:
            raise ConfigError(f"unknown policy.learn.optimizer '{cfg.optimizer}'; valid choices: adam, rmsprop")

    def _forward_learn(self, data: Any) -> Dict[str, Any]:
        # data: a batch of unrolls, each obs [T + 1, ...] and action/log_prob/reward/done/mask [T]; made time-major
        cfg = self._typed.learn
        batch = self._io.learn_batch(data)
        n, length = batch["mask"].shape[0], batch["mask"].shape[1] + 1
        action, behaviour_log_prob, reward, terminated, mask = (
            batch[k].transpose(0, 1) for k in ("action", "log_prob", "reward", "done", "mask"))
        # forward: one pass over every observation of every unroll (the last one bootstraps)
        self._modes.set(True)
        out = self._model(_flat(batch["obs"]), mode="compute_actor_critic")
        logit = _time_major(out["logit"], n, length)
        logit = {k: v[:-1] for k, v in logit.items()} if isinstance(logit, dict) else logit[:-1]
        value = _time_major(out["value"], n, length)
        # loss
        loss = vtrace_error(logit, action, behaviour_log_prob.float(), value, reward.float(), terminated.float(),
                            self._typed.discount_factor, self._typed.lambda_, cfg.rho_clip, cfg.c_clip, cfg.rho_pg_clip,
                            mask.float())
        total = (loss.policy_loss + self._schedules.value("learn.value_weight") * loss.value_loss
                 - self._schedules.value("learn.entropy_weight") * loss.entropy_loss)
        # optimise
        lr = self._schedules.set_lr(self._optimizer)
        norm = optimise(self._optimizer, total, self._replicas, cfg.grad_clip_norm)
        # log
        log = {"cur_lr": lr, "total_loss": total.detach(),
               "policy_loss": loss.policy_loss.detach(), "value_loss": loss.value_loss.detach(),
               "entropy": loss.entropy_loss.detach(),
               "value_mean": ((value[:-1] * mask).sum() / mask.sum()).detach()}
        if norm is not None:
            log["grad_norm"] = norm
        return log

    def _monitor_vars_learn(self) -> List[str]:
        return ["cur_lr", "total_loss", "policy_loss", "value_loss", "entropy", "value_mean"]

    def _state_dict_learn(self) -> Dict[str, Any]:
        return {"model": self._model.state_dict(), "optimizer": self._optimizer.state_dict()}

    def _load_state_dict_learn(self, state_dict: Dict[str, Any]) -> None:
        self._model.load_state_dict(state_dict["model"])
        self._optimizer.load_state_dict(state_dict["optimizer"])

    # ---- collect -----------------------------------------------------------------------------
    def _init_collect(self) -> None:
        self._check_config()
        self._init_shared()
        self._unroll_len = self._typed.collect.unroll_len

    @torch.no_grad()
    def _forward_collect(self, data: Dict[int, Any]) -> Dict[int, Any]:
        ids, obs = self._io.obs_batch(data)
        self._modes.set(False)
        dist = policy_distribution(self._model(obs, mode="compute_actor")["logit"])
        raw = dist.sample()
        log_prob = dist.log_prob(raw).cpu().numpy()
        if not self._continuous:
            action = raw.cpu().numpy()
            return {env_id: {"action": action[i], "log_prob": log_prob[i]} for i, env_id in enumerate(ids)}
        action, raw_np = self._clip(raw).cpu().numpy(), raw.cpu().numpy()
        return {env_id: {"action": action[i], "raw_action": raw_np[i], "log_prob": log_prob[i]}
                for i, env_id in enumerate(ids)}

    def _process_transition(self, obs: Any, policy_output: Dict[str, Any], timestep: Any) -> Dict[str, Any]:
        # done = terminated: a time-limit truncation still bootstraps from the true final obs (next_obs).
        return {"obs": obs, "action": policy_output.get("raw_action", policy_output["action"]),
                "log_prob": float(policy_output["log_prob"]), "reward": float(timestep.reward),
                "next_obs": timestep.obs, "done": is_terminated(timestep)}

    def _get_train_sample(self, transitions: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """One segment of one env's episode -> unrolls of ``unroll_len`` steps. The last one, when
        the episode ended sooner, is padded (``mask`` 0): its observation after the last real step
        is that step's ``next_obs`` -- the true final observation, which a truncated episode
        bootstraps from -- and the padding repeats it."""
        size = self._unroll_len
        samples = []
        for start in range(0, len(transitions), size):
            chunk = transitions[start:start + size]
            real, pad = len(chunk), size - len(chunk)
            last = chunk[-1]
            samples.append({
                "obs": _stack([t["obs"] for t in chunk] + [last["next_obs"]] * (pad + 1)),
                "action": np.stack([t["action"] for t in chunk] + [last["action"]] * pad),
                "log_prob": np.array([t["log_prob"] for t in chunk] + [0.0] * pad, dtype=np.float32),
                "reward": np.array([t["reward"] for t in chunk] + [0.0] * pad, dtype=np.float32),
                "done": np.array([t["done"] for t in chunk] + [True] * pad, dtype=bool),
                "mask": np.array([1.0] * real + [0.0] * pad, dtype=np.float32),
            })
        return samples

    def _state_dict_collect(self) -> Dict[str, Any]:
        return {"model": self._model.state_dict()}

    def _load_state_dict_collect(self, state_dict: Dict[str, Any]) -> None:
        self._model.load_state_dict(state_dict["model"])

