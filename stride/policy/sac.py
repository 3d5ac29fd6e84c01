"""SAC (Haarnoja et al., 2018, "Soft Actor-Critic: Off-Policy Maximum Entropy Deep Reinforcement
Learning with a Stochastic Actor"; and "Soft Actor-Critic Algorithms and Applications", 2018, for
the automatic temperature): a tanh-squashed Gaussian actor trained by reparameterisation against
twin soft Q critics, with Polyak-averaged target critics.

Math: ``stride.rl_utils.v_nstep_td_error`` (critic loss) on the soft target
``r + gamma^n (1 - terminated) (min_k Q'_k(s', a') - alpha log pi(a'|s'))``, ``a' ~ pi(.|s')``
(``min_q_value``); the actor minimises ``alpha log pi(a|s) - min_k Q_k(s, a)``; the temperature
``log alpha`` is learnt so the policy's entropy tracks ``target_entropy`` (default ``-|A|``). Sampling
and the log-prob correction ``- sum log(1 - tanh(u)^2)`` live in the ``reparam_sample`` wrapper.
Warm-up is ``random_collect_size`` transitions of uniformly random actions (the pipeline's).

Better than DI-engine on purpose: the warm-up really is uniform random (DI collects it with the
untrained policy); a time-limit truncation bootstraps and a termination does not (DI's Pendulum
config sets ``ignore_done=True`` instead); the tanh correction is exact and stable (DI adds 1e-6
inside the log); only the critics get a target copy (DI averages a whole actor-critic copy); each
optimizer differentiates only its own parameters.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Tuple, Type

import numpy as np
import torch

from ..model import model_wrap
from ..torch_utils import adam
from ..torch_utils.replica_sync import optimise
from ..rl_utils import min_q_value, v_nstep_td_error
from ..rl_utils.schedule import Scheduled
from ..utils.registry import POLICY_REGISTRY
from ..config.view import declared, setting, subsection
from .base_policy import Policy
from .views import OffPolicyACConfig, OffPolicyACLearnConfig, ScheduleValue


@dataclass(frozen=True)
class SACLearnConfig(OffPolicyACLearnConfig):
    # (float|schedule) Adam step sizes (schedules: stride.rl_utils.schedule, per train_iter by default).
    learning_rate_q: ScheduleValue = setting(Scheduled(3e-4, "(0, inf)"))
    learning_rate_policy: ScheduleValue = setting(Scheduled(3e-4, "(0, inf)"))
    learning_rate_alpha: ScheduleValue = setting(Scheduled(3e-4, "(0, inf)"))
    # (float) entropy temperature (the initial one when auto_alpha).
    alpha: float = setting(0.2, "(0, inf)")
    # (bool) learn log(alpha) so that the entropy tracks target_entropy.
    auto_alpha: bool = True
    # (float|None) None: -(number of action dims).
    target_entropy: Optional[float] = setting(None, kind=float)


@dataclass(frozen=True)
class SACConfig(OffPolicyACConfig):
    type: str = "sac"
    # (int) uniformly random transitions collected before training (actions in the env's space).
    random_collect_size: int = setting(10000, "[0, inf)")
    # (model.action_space) 'reparameterization': a Gaussian actor (mu, sigma), squashed by tanh when
    # sampled; (model.twin_critic) two critics: targets and the actor use their minimum.
    model: Mapping[str, object] = declared(dict(action_space="reparameterization", twin_critic=True))
    learn: SACLearnConfig = subsection(SACLearnConfig)


@POLICY_REGISTRY.register("sac")
class SACPolicy(Policy):
    """SAC with twin critics and automatic entropy temperature; the model needs ``actor``/``critic``."""

    config_view: ClassVar[Type[SACConfig]] = SACConfig
    _typed: SACConfig

    @classmethod
    def default_model(cls) -> Tuple[str, Dict[str, object]]:
        return "qac", {}

    # ---- learn -------------------------------------------------------------------------------
    def _init_learn(self) -> None:
        cfg = self._typed.learn
        self._gamma = self._typed.discount_factor
        self._q_optimizer = adam(self._model.get_submodule("critic").parameters(), lr=self._schedules.value("learn.learning_rate_q"))
        self._policy_optimizer = adam(self._model.get_submodule("actor").parameters(), lr=self._schedules.value("learn.learning_rate_policy"))
        self._log_alpha = torch.tensor(math.log(cfg.alpha), device=self._device, requires_grad=cfg.auto_alpha)
        self._alpha_optimizer = (adam([self._log_alpha], lr=self._schedules.value("learn.learning_rate_alpha"))
                                 if cfg.auto_alpha else None)
        action_dims = int(np.prod(np.asarray(self._typed.model["action_shape"])))
        self._target_entropy = -float(action_dims) if cfg.target_entropy is None else float(cfg.target_entropy)
        self._target_critic = model_wrap(copy.deepcopy(self._model.get_submodule("critic")), "target", update_type="momentum",
                                         update_kwargs={"theta": cfg.target_theta})
        self._actor_sample = model_wrap(self._model, "reparam_sample", tanh=True)
        self._use_is = self._typed.priority and self._typed.priority_IS_weight

    def _forward_learn(self, data: Any) -> Dict[str, Any]:
        cfg = self._typed.learn
        # data
        batch = self._io.learn_batch(data)
        obs, next_obs = batch["obs"], batch["next_obs"]
        alpha = self._log_alpha.detach().exp()
        self._modes.set(True)
        # forward: a fresh next action from the current policy, valued by the target critics
        with torch.no_grad():
            nxt = self._actor_sample.forward(next_obs, mode="compute_actor")
            next_v = min_q_value(self._target_critic.forward(next_obs, nxt["action"]), nxt["log_prob"], alpha)
        q = self._model.forward({"obs": obs, "action": batch["action"]}, mode="compute_critic")["q_value"]
        # loss: soft TD error of every critic
        weight = batch.get("IS") if self._use_is else None
        critic_loss, td_abs = v_nstep_td_error(q, next_v, batch["reward"].float(), batch["done"],
                                               batch.get("value_gamma", self._gamma), weight, cfg.loss_type)
        # optimise
        lr_q = self._schedules.set_lr(self._q_optimizer, "learn.learning_rate_q")
        lr_policy = self._schedules.set_lr(self._policy_optimizer, "learn.learning_rate_policy")
        optimise(self._q_optimizer, critic_loss, self._replicas, cfg.grad_clip_norm)
        # loss: the reparameterised policy against the min of the updated critics; the temperature
        new = self._actor_sample.forward(obs, mode="compute_actor")
        q_pi = min_q_value(self._model.forward({"obs": obs, "action": new["action"]}, mode="compute_critic")["q_value"])
        policy_loss = (alpha * new["log_prob"] - q_pi).mean()
        log_prob = new["log_prob"].detach()
        alpha_loss = -(self._log_alpha * (log_prob + self._target_entropy)).mean()
        # optimise
        optimise(self._policy_optimizer, policy_loss, self._replicas, cfg.grad_clip_norm)
        if self._alpha_optimizer is not None:
            self._schedules.set_lr(self._alpha_optimizer, "learn.learning_rate_alpha")
            optimise(self._alpha_optimizer, alpha_loss, self._replicas)
        # target update
        self._target_critic.update(self._model.critic)
        # log
        out = {
            "cur_lr_q": lr_q,
            "cur_lr_policy": lr_policy,
            "critic_loss": critic_loss.detach(),
            "policy_loss": policy_loss.detach(),
            "alpha_loss": alpha_loss.detach(),
            "total_loss": (critic_loss + policy_loss).detach(),
            "alpha": alpha.detach(),
            "entropy": -log_prob.detach().mean(),
            "q_value": q.detach().mean(),
        }
        if self._typed.priority:
            out["priority"] = td_abs.cpu().numpy()
        return out

    def _monitor_vars_learn(self) -> List[str]:
        return ["cur_lr_q", "cur_lr_policy", "critic_loss", "policy_loss", "alpha_loss", "total_loss", "alpha",
                "entropy", "q_value"]

    def _state_dict_learn(self) -> Dict[str, Any]:
        sd = {
            "model": self._model.state_dict(),
            "target_critic": self._target_critic.unwrapped().state_dict(),
            "q_optimizer": self._q_optimizer.state_dict(),
            "policy_optimizer": self._policy_optimizer.state_dict(),
            "log_alpha": self._log_alpha.detach().clone(),
        }
        if self._alpha_optimizer is not None:
            sd["alpha_optimizer"] = self._alpha_optimizer.state_dict()
        return sd

    def _load_state_dict_learn(self, state_dict: Dict[str, Any]) -> None:
        self._model.load_state_dict(state_dict["model"])
        self._target_critic.unwrapped().load_state_dict(state_dict["target_critic"])
        self._q_optimizer.load_state_dict(state_dict["q_optimizer"])
        self._policy_optimizer.load_state_dict(state_dict["policy_optimizer"])
        with torch.no_grad():
            self._log_alpha.copy_(state_dict["log_alpha"])
        if self._alpha_optimizer is not None:
            self._alpha_optimizer.load_state_dict(state_dict["alpha_optimizer"])

    # ---- collect -----------------------------------------------------------------------------
    def _init_collect(self) -> None:
        self._collect_model = model_wrap(self._model, "reparam_sample", tanh=True)
        self._nstep = self._typed.nstep
        self._gamma = self._typed.discount_factor

    def _forward_collect(self, data: Dict[int, Any], **kwargs: Any) -> Dict[int, Any]:
        return self._io.act(self._collect_model, data, to_env=True, mode="compute_actor")

    def _process_transition(self, obs: Any, policy_output: Dict[str, Any], timestep: Any) -> Dict[str, Any]:
        # the replay holds the [-1, 1] action the actor and critics learn with
        transition = super()._process_transition(obs, policy_output, timestep)
        transition["action"] = self._action_scale.from_env(transition["action"])
        return transition

    # ---- eval --------------------------------------------------------------------------------
    def _init_eval(self) -> None:
        self._eval_model = model_wrap(self._model, "deterministic_sample", tanh=True)

    def _forward_eval(self, data: Dict[int, Any]) -> Dict[int, Any]:
        return self._io.act(self._eval_model, data, to_env=True, mode="compute_actor")
