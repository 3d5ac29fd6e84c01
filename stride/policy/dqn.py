"""DQN (Mnih et al., 2015) with double Q-learning (van Hasselt et al., 2016), dueling heads,
n-step returns and optional prioritized replay (Schaul et al., 2016).

Math: ``stride.rl_utils.q_nstep_td_error`` (TD loss) and ``get_nstep_return_data`` (n-step
targets, computed once per transition in the collector). Truncated episodes bootstrap from the
true final observation; terminated ones never do. The target network is updated by ``assign``
(copy every ``target_update_freq`` learner steps) or ``momentum`` (Polyak, ``target_theta``) --
one of them, as ``target_update_type`` says (DI-engine silently always picks ``assign``).
Observations with an ``action_mask`` (PettingZoo's board games) act and bootstrap over legal
actions only: the model returns the mask, the sampling wrappers and the double-DQN argmax apply it.
``learning_rate`` and ``other.eps`` are schedules or numbers (``stride.rl_utils.schedule``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Tuple, Type

import torch

from ..model import model_wrap
from ..torch_utils import adam, cat_nested
from ..torch_utils.replica_sync import optimise
from ..rl_utils import q_nstep_td_error
from ..rl_utils.schedule import Scheduled
from ..utils.registry import POLICY_REGISTRY
from ..config.view import declared, setting, subsection
from ..config.search import Choice, FloatRange, IntRange
from .base_policy import Policy
from .views import PolicyConfig, PolicyLearnConfig, PolicyOtherConfig, ScheduleValue, TransitionCollectConfig


@dataclass(frozen=True)
class DQNLearnConfig(PolicyLearnConfig):
    # (int) gradient steps after each collect.
    update_per_collect: int = setting(3, "[1, inf)")
    # (int) samples per gradient step.
    batch_size: int = setting(64, "[1, inf)")
    # (float|schedule) Adam step size; a schedule dict (stride.rl_utils.schedule) changes it per train_iter.
    learning_rate: ScheduleValue = setting(Scheduled(1e-3, "(0, inf)"))
    # (str) 'assign': copy every target_update_freq steps; 'momentum': Polyak averaging with target_theta.
    target_update_type: str = setting("assign", ("assign", "momentum"))
    target_update_freq: int = setting(100, "[1, inf)")
    target_theta: float = setting(0.005, "(0, 1]")
    # (str) 'mse' or 'huber'.
    loss_type: str = setting("mse", ("mse", "huber"))
    # (float|None) clip the gradient norm to this value.
    grad_clip_norm: Optional[float] = setting(None, "(0, inf)")


@dataclass(frozen=True)
class DQNOtherConfig(PolicyOtherConfig):
    # (schedule|float) epsilon-greedy exploration, a schedule of collected env steps (any type of
    # stride.rl_utils.schedule; a dict without 'type' or of the same type keeps the other keys).
    eps: ScheduleValue = setting(Scheduled(dict(type="exp", start=0.95, end=0.1, decay=10000), "[0, 1]", unit="env_step"))
    replay_buffer: Mapping[str, object] = declared(dict(replay_buffer_size=10000))


@dataclass(frozen=True)
class DQNConfig(PolicyConfig):
    type: str = "dqn"
    on_policy: bool = False
    # (float) reward discount gamma.
    discount_factor: float = setting(0.97, "(0, 1]")
    # (int) steps summed in the TD target.
    nstep: int = setting(1, "[1, inf)")
    learn: DQNLearnConfig = subsection(DQNLearnConfig)
    collect: TransitionCollectConfig = subsection(TransitionCollectConfig)
    other: DQNOtherConfig = subsection(DQNOtherConfig)


@POLICY_REGISTRY.register("dqn")
class DQNPolicy(Policy):
    """Double DQN with n-step returns; ``collect_mode.forward`` takes ``eps=``."""

    config_view: ClassVar[Type[DQNConfig]] = DQNConfig
    _typed: DQNConfig
    #: ``stride -m tune``'s space: the knobs of rl-zoo3's DQN sampler (``sample_dqn_params`` in
    #: hyperparams_opt.py) in Stride's terms, its ranges narrowed to what small-env CPU budgets explore,
    #: plus n-step. rl-zoo3 -> Stride: gamma -> discount_factor; batch_size; train_freq (env steps per
    #: update round) -> collect.n_sample; gradient_steps (train_freq // subsample_steps) ->
    #: learn.update_per_collect; target_update_interval -> learn.target_update_freq (learner steps here);
    #: learning_starts -> random_collect_size; exploration_final_eps / exploration_fraction ->
    #: other.eps.end / .decay; net_arch tiny / small / medium ([64], [64, 64], [256, 256]) ->
    #: model.encoder_hidden_size_list, with [128, 128] (the CartPole zoo net) between. The network, the
    #: batch and the update ratio set the CPU cost of an env step; the rest, how many env steps a solve
    #: takes. Not searched: buffer_size (runs this short never fill the zoo's buffers), the evaluation
    #: schedule (not a learning setting).
    search_space = {
        "learn.learning_rate": FloatRange(1e-4, 1e-2, log=True),
        "learn.batch_size": Choice(16, 32, 64, 128, 256),
        "learn.update_per_collect": IntRange(1, 8),
        "learn.target_update_freq": IntRange(10, 1000, log=True),
        "collect.n_sample": Choice(4, 8, 16, 32),
        "discount_factor": Choice(0.95, 0.97, 0.98, 0.99, 0.995),
        "nstep": IntRange(1, 3),
        "other.eps.end": FloatRange(0.01, 0.2),
        "other.eps.decay": IntRange(1000, 50000, log=True),
        "model.encoder_hidden_size_list": Choice([64], [64, 64], [128, 128], [256, 256]),
        "random_collect_size": Choice(0, 1000, 5000),
    }

    @classmethod
    def default_model(cls) -> Tuple[str, Dict[str, object]]:
        return "dqn", {}

    # ---- learn -------------------------------------------------------------------------------
    def _init_learn(self) -> None:
        cfg = self._typed.learn
        self._gamma = self._typed.discount_factor
        self._optimizer = adam(self._model.parameters(), lr=self._schedules.value("learn.learning_rate"))
        kind = cfg.target_update_type
        kwargs = {"freq": cfg.target_update_freq} if kind == "assign" else {"theta": cfg.target_theta}
        self._target_model = model_wrap(copy.deepcopy(self._model), "target", update_type=kind, update_kwargs=kwargs)
        self._learn_model = model_wrap(self._model, "base")  # Q values only: no argmax over obs rows
        self._use_is = self._typed.priority and self._typed.priority_IS_weight

    def _forward_learn(self, data: Any) -> Dict[str, Any]:
        # data
        batch = self._io.learn_batch(data)
        obs, next_obs = batch["obs"], batch["next_obs"]
        n = batch["action"].shape[0]
        # forward: one pass of the online net over obs and next_obs (double DQN picks next actions)
        self._modes.set(True)
        out = self._learn_model.forward(cat_nested([obs, next_obs]))
        q, next_q_online = out["logit"][:n], out["logit"][n:].detach()
        if "action_mask" in out:  # masked observations: the next action is the best legal one
            next_q_online = next_q_online.masked_fill(~out["action_mask"][n:], float("-inf"))
        with torch.no_grad():
            next_q_target = self._target_model.forward(next_obs)["logit"]
        # loss
        value_gamma = batch.get("value_gamma", self._gamma)
        weight = batch.get("IS") if self._use_is else None
        loss, td_abs = q_nstep_td_error(
            q, next_q_target, batch["action"], next_q_online.argmax(-1), batch["reward"].float(), batch["done"],
            value_gamma, weight, self._typed.learn.loss_type, need_td_abs=self._typed.priority,
        )
        # optimise
        lr = self._schedules.set_lr(self._optimizer)
        optimise(self._optimizer, loss, self._replicas, self._typed.learn.grad_clip_norm)
        # target update
        self._target_model.update(self._model)
        # log: scalars stay tensors (on a GPU, no wait here; the learner's log hook reads them at its frequency)
        out = {
            "cur_lr": lr,
            "total_loss": loss.detach(),
            "q_value": q.detach().mean(),
        }
        if td_abs is not None:  # asked for when priority is on: the step's one transfer to the host
            out["priority"] = td_abs.cpu().numpy()
        return out

    def _monitor_vars_learn(self) -> List[str]:
        return ["cur_lr", "total_loss", "q_value"]

    def _state_dict_learn(self) -> Dict[str, Any]:
        return {
            "model": self._model.state_dict(),
            "target_model": self._target_model.unwrapped().state_dict(),
            "target_update_count": self._target_model.update_count,
            "optimizer": self._optimizer.state_dict(),
        }

    def _load_state_dict_learn(self, state_dict: Dict[str, Any]) -> None:
        self._model.load_state_dict(state_dict["model"])
        self._target_model.unwrapped().load_state_dict(state_dict["target_model"])
        self._target_model.reset(target_update_count=state_dict.get("target_update_count", 0))
        self._optimizer.load_state_dict(state_dict["optimizer"])

    # ---- collect -----------------------------------------------------------------------------
    def _init_collect(self) -> None:
        self._collect_model = model_wrap(self._model, "eps_greedy_sample")
        self._nstep = self._typed.nstep
        self._gamma = self._typed.discount_factor

    def _collect_kwargs(self, envstep: int = 0, train_iter: int = 0) -> Dict[str, Any]:
        return {"eps": self._schedules.value("other.eps", envstep, train_iter)}

    def _forward_collect(self, data: Dict[int, Any], eps: float = 0.0) -> Dict[int, Any]:
        return self._io.act(self._collect_model, data, eps=eps)

    # ---- eval --------------------------------------------------------------------------------
    def _init_eval(self) -> None:
        self._eval_model = model_wrap(self._model, "argmax_sample")

    def _forward_eval(self, data: Dict[int, Any]) -> Dict[int, Any]:
        return self._io.act(self._eval_model, data)
