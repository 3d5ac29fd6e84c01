"""DDPG (Lillicrap et al., 2016, "Continuous control with deep reinforcement learning"): a
deterministic tanh actor trained through a Q critic (the deterministic policy gradient, Silver et
al., 2014), Gaussian (or Ornstein-Uhlenbeck) exploration noise, Polyak-averaged target networks.

This file also holds TD3's three additions (Fujimoto et al., 2018) as config switches, which
``TD3Policy`` turns on: twin critics with a clipped double-Q target (``model.twin_critic``), target
policy smoothing (``learn.noise``: clipped Gaussian noise on the target action) and delayed actor
and target updates (``learn.actor_update_freq``).

Math: ``stride.rl_utils.v_nstep_td_error`` (critic loss) and ``min_q_value`` (bootstrap value);
n-step targets come from ``get_nstep_return_data`` in the collector. ``done`` is *terminated*:
Pendulum's 200-step time limit is a truncation and still bootstraps. Better than DI-engine on
purpose: DI's Pendulum configs set ``ignore_done=True`` to paper over folding truncation into
``done``; target smoothing noise is added out of place; each optimizer computes only the gradients
of its own parameters (the actor step does not fill the critic's ``.grad``); the delayed-update
counter is part of the learn state, so a resumed run keeps the same update schedule.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, List, Mapping, Tuple, Type

import torch

from ..model import model_wrap
from ..torch_utils import adam
from ..torch_utils.replica_sync import optimise
from ..rl_utils import min_q_value, v_nstep_td_error
from ..rl_utils.schedule import Scheduled
from ..utils.registry import POLICY_REGISTRY
from ..config.view import declared, setting, subsection
from .base_policy import Policy
from .views import OffPolicyACConfig, OffPolicyACLearnConfig, ScheduleValue, TransitionCollectConfig


@dataclass(frozen=True)
class DDPGLearnConfig(OffPolicyACLearnConfig):
    # (float|schedule) Adam step sizes (schedules: stride.rl_utils.schedule, per train_iter by default).
    learning_rate_actor: ScheduleValue = setting(Scheduled(1e-3, "(0, inf)"))
    learning_rate_critic: ScheduleValue = setting(Scheduled(1e-3, "(0, inf)"))
    # (int) update the actor and the targets once every this many critic updates (TD3: 2).
    actor_update_freq: int = setting(1, "[1, inf)")
    # (bool) target policy smoothing: clipped Gaussian noise on the target action (TD3).
    noise: bool = False
    noise_sigma: float = setting(0.2, "[0, inf)")
    noise_range: Mapping[str, float] = declared(dict(min=-0.5, max=0.5))


@dataclass(frozen=True)
class DDPGCollectConfig(TransitionCollectConfig):
    # (str) exploration noise: 'gauss' or 'ou'; its scale (actions live in [-1, 1]), a number or a
    # schedule of collected env steps (stride.rl_utils.schedule).
    noise_type: str = setting("gauss", ("gauss", "ou"))
    noise_sigma: ScheduleValue = setting(Scheduled(0.1, "[0, inf)", unit="env_step"))


@dataclass(frozen=True)
class DDPGConfig(OffPolicyACConfig):
    type: str = "ddpg"
    # (int) uniformly random transitions collected before training (actions in the env's space).
    random_collect_size: int = setting(25000, "[0, inf)")
    # (model.action_space) 'regression': a deterministic tanh actor; (model.twin_critic) two critics
    # and a clipped double-Q target (TD3).
    model: Mapping[str, object] = declared(dict(action_space="regression", twin_critic=False))
    learn: DDPGLearnConfig = subsection(DDPGLearnConfig)
    collect: DDPGCollectConfig = subsection(DDPGCollectConfig)


@POLICY_REGISTRY.register("ddpg")
class DDPGPolicy(Policy):
    """DDPG; with ``twin_critic``, ``learn.noise`` and ``learn.actor_update_freq=2`` it is TD3."""

    config_view: ClassVar[Type[DDPGConfig]] = DDPGConfig
    _typed: DDPGConfig

    @classmethod
    def default_model(cls) -> Tuple[str, Dict[str, object]]:
        return "qac", {}

    # ---- learn -------------------------------------------------------------------------------
    def _init_learn(self) -> None:
        cfg = self._typed.learn
        self._gamma = self._typed.discount_factor
        self._actor_optimizer = adam(self._model.get_submodule("actor").parameters(), lr=self._schedules.value("learn.learning_rate_actor"))
        self._critic_optimizer = adam(self._model.get_submodule("critic").parameters(), lr=self._schedules.value("learn.learning_rate_critic"))
        self._target = model_wrap(copy.deepcopy(self._model), "target", update_type="momentum",
                                  update_kwargs={"theta": cfg.target_theta})
        self._target_model = self._target
        if cfg.noise:  # target policy smoothing: the target actor's action gets clipped noise
            self._target_model = model_wrap(self._target, "action_noise", noise_type="gauss",
                                            noise_kwargs={"mu": 0.0, "sigma": cfg.noise_sigma},
                                            noise_range=dict(cfg.noise_range), action_range={"min": -1.0, "max": 1.0})
        self._use_is = self._typed.priority and self._typed.priority_IS_weight
        self._learn_steps = 0
        self._last_actor_loss: float | torch.Tensor = 0.0  # reported until the first (delayed) actor update

    def _forward_learn(self, data: Any) -> Dict[str, Any]:
        cfg = self._typed.learn
        # data
        batch = self._io.learn_batch(data)
        obs, next_obs = batch["obs"], batch["next_obs"]
        self._modes.set(True)
        # forward: the (smoothed) target action and the target critics at next_obs
        with torch.no_grad():
            next_action = self._target_model.forward(next_obs, mode="compute_actor")["action"]
            next_q = self._target_model.forward({"obs": next_obs, "action": next_action},
                                                mode="compute_critic")["q_value"]
        q = self._model.forward({"obs": obs, "action": batch["action"]}, mode="compute_critic")["q_value"]
        # loss: critic TD error, bootstrapping from the min of the target critics
        weight = batch.get("IS") if self._use_is else None
        critic_loss, td_abs = v_nstep_td_error(q, min_q_value(next_q), batch["reward"].float(), batch["done"],
                                               batch.get("value_gamma", self._gamma), weight, cfg.loss_type)
        # optimise
        lr_actor = self._schedules.set_lr(self._actor_optimizer, "learn.learning_rate_actor")
        lr_critic = self._schedules.set_lr(self._critic_optimizer, "learn.learning_rate_critic")
        optimise(self._critic_optimizer, critic_loss, self._replicas, cfg.grad_clip_norm)
        self._learn_steps += 1
        if self._learn_steps % cfg.actor_update_freq == 0:
            # loss: deterministic policy gradient through the first critic
            action = self._model.forward(obs, mode="compute_actor")["action"]
            q_pi = self._model.forward({"obs": obs, "action": action}, mode="compute_critic")["q_value"]
            actor_loss = -(q_pi[0] if q_pi.dim() > 1 else q_pi).mean()
            # optimise
            optimise(self._actor_optimizer, actor_loss, self._replicas, cfg.grad_clip_norm)
            # target update (delayed together with the actor)
            self._target.update(self._model)
            self._last_actor_loss = actor_loss.detach()
        # log
        out = {
            "cur_lr_actor": lr_actor,
            "cur_lr_critic": lr_critic,
            "critic_loss": critic_loss.detach(),
            "actor_loss": self._last_actor_loss,
            "total_loss": critic_loss.detach() + self._last_actor_loss,
            "q_value": q.detach().mean(),
        }
        if self._typed.priority:
            out["priority"] = td_abs.cpu().numpy()
        return out

    def _monitor_vars_learn(self) -> List[str]:
        return ["cur_lr_actor", "cur_lr_critic", "critic_loss", "actor_loss", "total_loss", "q_value"]

    def _state_dict_learn(self) -> Dict[str, Any]:
        return {
            "model": self._model.state_dict(),
            "target_model": self._target.unwrapped().state_dict(),
            "actor_optimizer": self._actor_optimizer.state_dict(),
            "critic_optimizer": self._critic_optimizer.state_dict(),
            "learn_steps": self._learn_steps,
        }

    def _load_state_dict_learn(self, state_dict: Dict[str, Any]) -> None:
        self._model.load_state_dict(state_dict["model"])
        self._target.unwrapped().load_state_dict(state_dict["target_model"])
        self._actor_optimizer.load_state_dict(state_dict["actor_optimizer"])
        self._critic_optimizer.load_state_dict(state_dict["critic_optimizer"])
        self._learn_steps = int(state_dict.get("learn_steps", 0))

    # ---- collect -----------------------------------------------------------------------------
    def _init_collect(self) -> None:
        cfg = self._typed.collect
        self._collect_model = model_wrap(self._model, "action_noise", noise_type=cfg.noise_type,
                                         noise_kwargs={"sigma": self._schedules.value("collect.noise_sigma", env_step=0, train_iter=0)},
                                         action_range={"min": -1.0, "max": 1.0})
        self._nstep = self._typed.nstep
        self._gamma = self._typed.discount_factor

    def _collect_kwargs(self, envstep: int = 0, train_iter: int = 0) -> Dict[str, Any]:
        return {"sigma": self._schedules.value("collect.noise_sigma", envstep, train_iter)}

    def _forward_collect(self, data: Dict[int, Any], **kwargs: Any) -> Dict[int, Any]:
        return self._io.act(self._collect_model, data, to_env=True, mode="compute_actor", **kwargs)

    def _process_transition(self, obs: Any, policy_output: Dict[str, Any], timestep: Any) -> Dict[str, Any]:
        # the replay holds the [-1, 1] action the actor and critics learn with
        transition = super()._process_transition(obs, policy_output, timestep)
        transition["action"] = self._action_scale.from_env(transition["action"])
        return transition

    # ---- eval --------------------------------------------------------------------------------
    def _init_eval(self) -> None:
        self._eval_model = model_wrap(self._model, "base")

    def _forward_eval(self, data: Dict[int, Any]) -> Dict[int, Any]:
        return self._io.act(self._eval_model, data, to_env=True, mode="compute_actor")
