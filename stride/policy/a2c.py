"""A2C: the synchronous advantage actor-critic (Mnih et al., 2016, "Asynchronous Methods for Deep
Reinforcement Learning"; synchronous form as in OpenAI Baselines / Wu et al., 2017).

Math: ``stride.rl_utils.a2c_error`` (loss) and ``get_gae`` (advantages). One gradient step per
collect on all of its samples. Advantages are GAE(lambda); ``gae_lambda=1`` gives the n-step
returns of the original A2C (discounted rewards to the segment's end, bootstrapped from the
critic there). Discrete and continuous action spaces, from ``model.action_space``.

The collect and eval modes are PPO's (``stride.policy.ppo.ActorCriticPolicy``): GAE once per segment in
``_get_train_sample``, truncation bootstraps from the true final observation, termination never
does, collect mode never reads learn-mode state. Only the config and the learn step differ:
A2C's config does not inherit PPO's (no epochs, minibatches or clipping to silently ignore).
``learning_rate``, ``value_weight`` and ``entropy_weight`` may be schedules (``stride.rl_utils.schedule``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import torch

from ..model import model_wrap
from ..torch_utils import adam
from ..torch_utils.replica_sync import optimise
from ..rl_utils import a2c_error
from ..utils.registry import POLICY_REGISTRY
from ..config.view import setting, subsection
from ..rl_utils.schedule import Scheduled
from .ppo import ActorCriticConfig, ActorCriticLearnConfig, ActorCriticPolicy
from .views import PolicyCollectConfig, ScheduleValue
from ..utils.errors import ConfigError


@dataclass(frozen=True)
class A2CLearnConfig(ActorCriticLearnConfig):
    # (str) 'rmsprop' (the paper's, alpha=0.99, eps=1e-5) or 'adam'.
    optimizer: str = setting("rmsprop", ("rmsprop", "adam"))
    # (float|schedule) step size; a schedule dict (stride.rl_utils.schedule) changes it per train_iter.
    learning_rate: ScheduleValue = setting(Scheduled(7e-4, "(0, inf)"))
    # (bool) normalise advantages over the collect.
    adv_norm: bool = False
    # (bool) the critic predicts returns normalised by their running mean/std.
    value_norm: bool = False
    # (float|schedule) weights of the value loss and of the entropy bonus.
    value_weight: ScheduleValue = setting(Scheduled(0.5, "[0, inf)"))
    entropy_weight: ScheduleValue = setting(Scheduled(0.01, "[0, inf)"))
    # (float|None) clip the gradient norm to this value.
    grad_clip_norm: Optional[float] = setting(0.5, "(0, inf)", optional=True)


@dataclass(frozen=True)
class A2CCollectConfig(PolicyCollectConfig):
    # (int) transitions per collect (= per gradient step).
    n_sample: Optional[int] = setting(None, "[1, inf)", kind=int)
    n_episode: Optional[int] = setting(None, "[1, inf)", kind=int)


@dataclass(frozen=True)
class A2CConfig(ActorCriticConfig):
    type: str = "a2c"
    on_policy: bool = True
    # (float) GAE lambda; 1.0 gives n-step returns bootstrapped at the segment's end.
    gae_lambda: float = setting(1.0, "[0, 1]")
    learn: A2CLearnConfig = subsection(A2CLearnConfig)
    collect: A2CCollectConfig = subsection(A2CCollectConfig)


@POLICY_REGISTRY.register("a2c")
class A2CPolicy(ActorCriticPolicy):
    """A2C; collect samples actions from the policy, eval takes the argmax / the Gaussian mean."""

    config_view = A2CConfig
    _typed: A2CConfig

    # ---- learn -------------------------------------------------------------------------------
    def _init_learn(self) -> None:
        self._init_shared()
        cfg = self._typed.learn
        params, lr = self._model.parameters(), self._schedules.value("learn.learning_rate")
        if cfg.optimizer == "rmsprop":
            self._optimizer = torch.optim.RMSprop(params, lr=lr, alpha=0.99, eps=1e-5)
        elif cfg.optimizer == "adam":
            self._optimizer = adam(params, lr=lr, eps=1e-5)
        else:
            raise ConfigError(f"unknown learn.optimizer '{cfg.optimizer}'; valid choices: adam, rmsprop")
        self._kl_coef = 0.0  # no KL penalty (PPO's state dict, which A2C's is, records it)
        self._learn_model = model_wrap(self._model, "base")

    def _forward_learn(self, data: Any) -> Dict[str, Any]:
        # data: one collect's samples with GAE advantages and returns from the collector
        cfg = self._typed.learn
        batch = self._io.learn_batch(data)
        self._modes.set(True)
        if self._return_norm.enabled:
            self._return_norm.update(self._replicas.moments(batch["return"]))
        adv = batch["adv"]
        if cfg.adv_norm:  # over all replicas' batches with multi_gpu
            adv = self._replicas.standardize(adv)
        lr = self._schedules.set_lr(self._optimizer)
        # forward
        out = self._learn_model.forward(batch["obs"], mode="compute_actor_critic")
        # loss
        loss = a2c_error(out["logit"], batch["action"], out["value"], adv, self._return_norm.normalize(batch["return"]))
        total = (loss.policy_loss + self._schedules.value("learn.value_weight") * loss.value_loss
                 - self._schedules.value("learn.entropy_weight") * loss.entropy_loss)
        # optimise
        grad_norm = optimise(self._optimizer, total, self._replicas, cfg.grad_clip_norm)
        # log
        out_log = {"cur_lr": lr, "total_loss": total.detach(),
                   "policy_loss": loss.policy_loss.detach(), "value_loss": loss.value_loss.detach(),
                   "entropy": loss.entropy_loss.detach(), "adv_mean": batch["adv"].mean(),
                   "value_mean": batch["value"].mean(), "return_mean": batch["return"].mean()}
        if grad_norm is not None:
            out_log["grad_norm"] = grad_norm
        return out_log

    def _monitor_vars_learn(self) -> List[str]:
        return ["cur_lr", "total_loss", "policy_loss", "value_loss", "entropy"]
