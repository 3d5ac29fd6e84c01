"""Behaviour cloning: supervised learning of the expert's action from its observation.

Discrete actions: cross-entropy on the logits of the discrete Q/logit model (``dqn``: the same
network DQN uses, read as action logits). Continuous actions: the ``qac`` model's actor (the one
SAC / TD3 / DDPG use; only its parameters are trained), which learns in [-1, 1] like theirs --
a demonstration's action in the env's units is mapped into [-1, 1] by ``process_transition``
(:class:`~stride.policy.action_range.ActionScale`, the map SAC uses for its replay) and the actions
handed out are mapped back, so a BC actor and a SAC actor are interchangeable. Two losses:
``'mse'`` between ``tanh(mu)`` (or a ``regression`` actor's action) and the expert's action, and
``'gaussian_nll'``: the negative log-likelihood of the expert's action under the tanh-squashed
Gaussian (computed on ``u = atanh(a)``; the change of variables does not depend on the network,
so it is left out of the loss). Eval acts greedily (argmax / the mean), as the expert was recorded.

Data comes from the offline entry (:func:`stride.entry.serial_pipeline_offline`), which replays a
demonstration dataset (``policy.collect.data_path``) through this policy's ``process_transition``
into a replay buffer; BC itself never reads a file. Its collect mode (the same greedy actor) exists
so a BC policy can also be an expert for ``collect_demo`` or a warm start for an online learner.

How SQIL relates (the seeds' "RBC", never defined by DI-engine: SQIL's paper was first titled
"Imitation Learning via Regularized Behavioral Cloning", Reddy et al. 2019): SQIL's soft-Q loss on
expert transitions alone (reward 1) is a behaviour-cloning term -- the softmax of soft Q values is
a policy whose log-likelihood of the expert's action appears in the loss -- plus a soft Bellman
regulariser that ties Q values across states; agent transitions with reward 0 make that
regulariser push the policy back to the expert's states. Plain BC, here, has no regulariser and
never touches the env while learning (``stride/policy/sqil.py`` has the regularised variant).

Better than the peers on purpose: DI-engine's ``serial_pipeline_bc`` reads a pickle in a second
training loop of its own (CartPole: learning rate 0.01, 20 epochs, 10,000 transitions); here the
data is a Minari dataset read by the one reader, training and checkpoints go through the ordinary
learner (exact resume), evaluation is confirmed over 100 episodes, and 10 episodes suffice
(``cartpole_bc``: 200-400 gradient steps). Continuous actions are cloned in the same [-1, 1] units
the zoo's SAC / TD3 actors use, so a cloned actor can warm-start them. ``imitation``'s BC (SB3's
home for it) cannot share an install with Gymnasium 1.x (it pins Gymnasium 0.29).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from ..config.view import declared, setting, subsection
from ..model import model_wrap
from ..rl_utils.schedule import Scheduled
from ..torch_utils import adam
from ..torch_utils.replica_sync import optimise
from ..utils.errors import ConfigError
from ..utils.registry import POLICY_REGISTRY
from .base_policy import Policy
from .views import ActionRange, PolicyCollectConfig, PolicyConfig, PolicyLearnConfig, PolicyOtherConfig, ScheduleValue

LOSSES = ("mse", "gaussian_nll")
#: actions are clipped this far inside (-1, 1) before atanh (Gaussian NLL): a saturated expert
#: action (a torque at its bound) gets a large but finite pre-squash value
_EDGE = 1e-4


def bc_discrete_loss(logit: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the expert's action indices under ``softmax(logit)``."""
    return F.cross_entropy(logit, action.long().reshape(-1))


def bc_continuous_loss(out: Dict[str, torch.Tensor], action: torch.Tensor, loss_type: str) -> torch.Tensor:
    """The actor's loss against expert actions in [-1, 1] (``out``: the actor's ``mu``/``sigma``, or a
    regression actor's ``action``). ``'mse'``: mean over batch and dims of ``(tanh(mu) - a)^2``;
    ``'gaussian_nll'``: mean over the batch of ``-log N(atanh(a); mu, sigma)`` summed over dims."""
    action = action.reshape(action.shape[0], -1).float()
    if loss_type == "mse":
        pred = out["action"] if "action" in out else torch.tanh(out["mu"])
        return F.mse_loss(pred, action)
    if loss_type == "gaussian_nll":
        if "mu" not in out:
            raise ConfigError("policy.learn.loss_type='gaussian_nll' needs a Gaussian actor: "
                              "set policy.model.action_space='reparameterization'")
        u = torch.atanh(action.clamp(-1 + _EDGE, 1 - _EDGE))
        mu, sigma = out["mu"], out["sigma"]
        nll = 0.5 * ((u - mu) / sigma).pow(2) + sigma.log() + 0.5 * math.log(2 * math.pi)
        return nll.sum(-1).mean()
    raise ConfigError(f"unknown policy.learn.loss_type '{loss_type}'; valid choices: {', '.join(LOSSES)}")


@dataclass(frozen=True)
class BCLearnConfig(PolicyLearnConfig):
    # (int) samples per gradient step.
    batch_size: int = setting(64, "[1, inf)")
    # (float|schedule) Adam step size; a schedule dict (stride.rl_utils.schedule) changes it per train_iter.
    learning_rate: ScheduleValue = setting(Scheduled(1e-3, "(0, inf)"))
    # (float) L2 penalty (Adam's weight_decay).
    weight_decay: float = setting(0.0, "[0, inf)")
    # (str) continuous actions: 'mse' on the squashed mean, or 'gaussian_nll' (see the module docstring).
    loss_type: str = setting("mse", LOSSES)
    # (float|None) clip the gradient norm to this value.
    grad_clip_norm: Optional[float] = setting(None, "(0, inf)")


@dataclass(frozen=True)
class BCCollectConfig(PolicyCollectConfig):
    # (str) the demonstrations: a Minari dataset folder or local id (stride -m collect_demo --out DIR).
    data_path: Optional[str] = None
    # (int) transitions per collect where a BC policy does collect (online use of its greedy actor);
    # the offline entry never collects. (Every config names n_sample or n_episode.)
    n_sample: Optional[int] = setting(64, "[1, inf)", kind=int)
    n_episode: Optional[int] = setting(None, "[1, inf)", kind=int)
    unroll_len: int = setting(1, "[1, inf)")


@dataclass(frozen=True)
class BCOtherConfig(PolicyOtherConfig):
    replay_buffer: Mapping[str, object] = declared(dict(replay_buffer_size=1_000_000))


@dataclass(frozen=True)
class BCConfig(PolicyConfig):
    type: str = "bc"
    # (bool) trained from a replay of the dataset (the offline entry fills one).
    on_policy: bool = False
    # (bool) learns from a dataset alone: the online pipelines refuse it (they would clone its own actions).
    offline: bool = True
    # (bool) False: discrete actions (cross-entropy, model 'dqn'); True: a continuous actor (model 'qac').
    continuous: bool = False
    # ([low, high]|None) continuous actions: the env's bounds (None: taken from the env's Box space).
    action_range: ActionRange = None
    learn: BCLearnConfig = subsection(BCLearnConfig)
    collect: BCCollectConfig = subsection(BCCollectConfig)
    other: BCOtherConfig = subsection(BCOtherConfig)


@POLICY_REGISTRY.register("bc")
class BCPolicy(Policy):
    """Behaviour cloning; ``continuous`` picks the loss and the model (``dqn`` logits / ``qac`` actor)."""

    config_view = BCConfig
    _typed: BCConfig

    @classmethod
    def default_model(cls) -> Tuple[str, Dict[str, object]]:
        return "dqn", {}

    def _trained(self) -> nn.Module:
        """The network BC trains: the whole discrete model, or the continuous model's actor."""
        if not self._typed.continuous:
            return self._model
        actor = getattr(self._model, "actor", None)
        if not isinstance(actor, nn.Module):
            raise ConfigError(f"policy.continuous=True needs a model with an actor (create_config "
                              f"model=dict(type='qac')), got {type(self._model).__name__}")
        return actor

    # ---- learn -------------------------------------------------------------------------------
    def _init_learn(self) -> None:
        cfg = self._typed.learn
        self._optimizer = adam(self._trained().parameters(), lr=self._schedules.value("learn.learning_rate"), weight_decay=cfg.weight_decay)

    def _forward_learn(self, data: Any) -> Dict[str, Any]:
        # data
        batch = self._io.learn_batch(data)
        self._modes.set(True)
        # forward + loss
        if self._typed.continuous:
            out = self._model.forward(batch["obs"], mode="compute_actor")
            loss = bc_continuous_loss(out, batch["action"], self._typed.learn.loss_type)
            log = {}
        else:
            logit = self._model.forward(batch["obs"])["logit"]
            loss = bc_discrete_loss(logit, batch["action"])
            log = {"accuracy": (logit.detach().argmax(-1) == batch["action"].reshape(-1)).float().mean()}
        # optimise
        lr = self._schedules.set_lr(self._optimizer)
        optimise(self._optimizer, loss, self._replicas, self._typed.learn.grad_clip_norm)
        # log
        return {"cur_lr": lr, "total_loss": loss.detach(), **log}

    def _monitor_vars_learn(self) -> List[str]:
        return ["cur_lr", "total_loss"] + ([] if self._typed.continuous else ["accuracy"])

    # ---- collect -----------------------------------------------------------------------------
    def _init_collect(self) -> None:
        self._collect_model = self._greedy()

    def _forward_collect(self, data: Dict[int, Any], **kwargs: Any) -> Dict[int, Any]:
        return self._act_greedy(self._collect_model, data)

    def _process_transition(self, obs: Any, policy_output: Dict[str, Any], timestep: Any) -> Dict[str, Any]:
        # continuous: the [-1, 1] action the actor learns in (a demonstration is in the env's units)
        transition = super()._process_transition(obs, policy_output, timestep)
        if self._typed.continuous:
            transition["action"] = self._action_scale.from_env(transition["action"])
        return transition

    # ---- eval --------------------------------------------------------------------------------
    def _init_eval(self) -> None:
        self._eval_model = self._greedy()

    def _forward_eval(self, data: Dict[int, Any]) -> Dict[int, Any]:
        return self._act_greedy(self._eval_model, data)

    # ---- helpers -----------------------------------------------------------------------------
    def _greedy(self) -> Any:
        if self._typed.continuous:
            return model_wrap(self._model, "deterministic_sample", tanh=True)
        return model_wrap(self._model, "argmax_sample")

    def _act_greedy(self, model: Any, data: Dict[int, Any]) -> Dict[int, Any]:
        if self._typed.continuous:
            return self._io.act(model, data, to_env=True, mode="compute_actor")
        return self._io.act(model, data)
