"""SQIL (Reddy, Dragan & Levine, 2020, "SQIL: Imitation Learning via Reinforcement Learning with
Sparse Rewards"; first titled "... via Regularized Behavioral Cloning"): soft Q-learning where the
expert's transitions carry reward 1 and the agent's own carry reward 0. The env's reward is never
stored: ``process_transition`` writes 1 for a demonstration step (``info['demo']``, set where the
dataset is replayed, :mod:`stride.entry.demonstrations`) and 0 for every step it collects.

Data: the serial pipeline puts the dataset at ``policy.collect.data_path`` beside the agent's
replay (:class:`~stride.data.buffer.demo_mix.DemoMixBuffer`); every batch is ``demo_fraction``
(0.5, the paper's and DI-engine's half) expert samples, the rest the agent's.

Math (soft Q-learning, Haarnoja et al. 2017), temperature ``alpha``: the soft value
``V(s) = alpha * logsumexp(Q(s, .) / alpha)``; target ``r + gamma * (1 - terminated) * V'(s')`` with
the target network's Q (:func:`soft_q_target`); MSE to ``Q(s, a)``. The policy is
``softmax(Q / alpha)``: collect samples from it (``multinomial_sample``), eval takes its argmax.
How it relates to behaviour cloning (:mod:`stride.policy.bc`): on expert samples alone the loss
contains BC's log-likelihood of the expert action under ``softmax(Q / alpha)``; the soft Bellman
term on the agent's zero-reward samples is the regulariser that pulls it back to expert states.

Continuous actions (``'sqil_sac'``, the paper's continuous variant): SAC -- already soft Q-learning
with a learnt temperature -- on the same 0/1 rewards and the same half-and-half batches; only
``process_transition`` differs from ``stride/policy/sac.py``.

Better than DI-engine on purpose: its SQIL entry rolls the expert out *online* every iteration
(it needs the expert's model, not its data, and a second collector) inside a copy of the serial
loop, and overwrites rewards in the learner; here the expert is a standard dataset, the loop is
the serial one, and the buffers never hold an env reward (a test checks every learner batch is 0/1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Union

import torch
import torch.nn.functional as F

from ..config.view import setting, subsection
from ..model import model_wrap
from ..torch_utils.replica_sync import optimise
from ..utils.registry import POLICY_REGISTRY
from .base_policy import is_terminated
from .dqn import DQNConfig, DQNLearnConfig, DQNPolicy
from .sac import SACConfig, SACPolicy
from .views import DemoMixConfig, TransitionCollectConfig


def soft_q_target(next_q: torch.Tensor, reward: torch.Tensor, done: torch.Tensor,
                  gamma: Union[float, torch.Tensor], alpha: float) -> torch.Tensor:
    """``reward + gamma * (1 - done) * alpha * logsumexp(next_q / alpha)`` per row."""
    soft_v = alpha * torch.logsumexp(next_q / alpha, dim=-1)
    return reward + gamma * (1.0 - done.float()) * soft_v


@dataclass(frozen=True)
class SQILLearnConfig(DQNLearnConfig):
    # (float) soft Q temperature: the policy is softmax(Q / alpha).
    alpha: float = setting(0.12, "(0, inf)")


@dataclass(frozen=True)
class SQILCollectConfig(TransitionCollectConfig, DemoMixConfig):
    """``policy.collect`` of SQIL (discrete and SAC): transitions, half of each batch the expert's."""


@dataclass(frozen=True)
class SQILConfig(DQNConfig):
    type: str = "sqil"
    learn: SQILLearnConfig = subsection(SQILLearnConfig)
    collect: SQILCollectConfig = subsection(SQILCollectConfig)


@POLICY_REGISTRY.register("sqil")
class SQILPolicy(DQNPolicy):
    """Soft Q-learning on expert (reward 1) and agent (reward 0) transitions; DQN's model and target."""

    config_view = SQILConfig
    _typed: SQILConfig

    # ---- learn -------------------------------------------------------------------------------
    def _forward_learn(self, data: Any) -> Dict[str, Any]:
        cfg = self._typed.learn
        # data
        batch = self._io.learn_batch(data)
        # forward
        self._modes.set(True)
        q = self._learn_model.forward(batch["obs"])["logit"]
        q_taken = q.gather(1, batch["action"].long().reshape(-1, 1)).squeeze(1)
        with torch.no_grad():
            next_q = self._target_model.forward(batch["next_obs"])["logit"]
            gamma = batch.get("value_gamma", self._gamma)  # n-step samples carry their own discount
            target = soft_q_target(next_q, batch["reward"].float(), batch["done"], gamma, cfg.alpha)
        # loss
        loss = F.mse_loss(q_taken, target)
        # optimise
        lr = self._schedules.set_lr(self._optimizer)
        optimise(self._optimizer, loss, self._replicas, cfg.grad_clip_norm)
        # target update
        self._target_model.update(self._model)
        # log
        return {"cur_lr": lr, "total_loss": loss.detach(),
                "q_value": q_taken.detach().mean(),
                "expert_share": (batch["reward"] > 0).float().mean()}

    def _monitor_vars_learn(self) -> List[str]:
        return ["cur_lr", "total_loss", "q_value", "expert_share"]

    # ---- collect -----------------------------------------------------------------------------
    def _init_collect(self) -> None:
        self._collect_model = model_wrap(self._model, "multinomial_sample")
        self._gamma = self._typed.discount_factor

    def _collect_kwargs(self, envstep: int = 0, train_iter: int = 0) -> Dict[str, Any]:
        return {}

    def _forward_collect(self, data: Dict[int, Any], eps: float = 0.0) -> Dict[int, Any]:
        # (DQN's signature; no epsilon here: the actions are drawn from softmax(Q / alpha))
        return self._io.act(self._collect_model, data, alpha=self._typed.learn.alpha)

    def _process_transition(self, obs: Any, policy_output: Dict[str, Any], timestep: Any) -> Dict[str, Any]:
        # the env's reward is dropped here: 1 for the expert's steps, 0 for the agent's
        return {"obs": obs, "action": policy_output["action"], "reward": _sqil_reward(timestep),
                "next_obs": timestep.obs, "done": is_terminated(timestep)}


def _sqil_reward(timestep: Any) -> float:
    """1 for a demonstration step (``info['demo']``), 0 for the agent's own: the env's reward is dropped."""
    return 1.0 if timestep.info.get("demo") else 0.0


@dataclass(frozen=True)
class SQILSACConfig(SACConfig):
    type: str = "sqil_sac"
    collect: SQILCollectConfig = subsection(SQILCollectConfig)


@POLICY_REGISTRY.register("sqil_sac")
class SQILSACPolicy(SACPolicy):
    """SQIL for continuous actions: SAC on expert (reward 1) and agent (reward 0) transitions."""

    config_view = SQILSACConfig
    _typed: SQILSACConfig

    def _process_transition(self, obs: Any, policy_output: Dict[str, Any], timestep: Any) -> Dict[str, Any]:
        transition = super()._process_transition(obs, policy_output, timestep)  # (SAC's [-1, 1] action)
        transition["reward"] = _sqil_reward(timestep)
        return transition
