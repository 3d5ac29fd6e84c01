"""R2D2 (Kapturowski et al., 2019, "Recurrent Experience Replay in Distributed Reinforcement
Learning"): a recurrent (LSTM) double DQN trained on stored sequences.

- Collect and eval keep one recurrent state per env across ``forward`` calls (the ``hidden_state``
  wrapper) and reset it exactly when that env's episode ends (the workers call ``reset([env_id])``).
- Each step records the state it started from; ``stride.data.SequenceAdder`` cuts an episode into
  sequences of ``burnin_step + learn_unroll_len + nstep`` rows every ``learn_unroll_len`` rows
  (consecutive sequences overlap by burn-in + n-step), pads the last one (``mask``) and keeps the
  state of each sequence's first row (``prev_state``).
- Learning: the online and target networks start from the stored state and unroll the whole
  sequence; the first ``burnin_step`` rows only warm the state up (no loss, no gradient into the
  stored state), the rest learn n-step double-Q targets with value rescaling
  (``stride.rl_utils.sequence_nstep_return``, ``q_sequence_td_error``).
- Prioritised sequences: priority ``eta * max |td| + (1 - eta) * mean |td|`` over the learnt rows
  (``sequence_priority``), IS-weighted loss.

Better than DI-engine on purpose: a sequence that starts an episode starts from the exact initial
state, so its burn-in rows are learnt from too (DI never learns the first ``burnin_step`` steps of
an episode); an n-step window never crosses an episode end and a time-limit truncation bootstraps
from the true final observation (DI's R2D2 had done-slice and hidden-state-reset bugs, PR #52);
states are one flat tensor per env, not lists of dicts.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Set, Tuple, Type

import numpy as np
import torch

from ..config.view import declared, setting, subsection
from ..data.adders import SequenceAdder
from ..model import model_wrap
from ..rl_utils.schedule import Scheduled
from ..rl_utils import (q_sequence_td_error, sequence_learnt_rows, sequence_nstep_return,
                        sequence_priority)
from ..torch_utils import adam
from ..torch_utils.replica_sync import optimise
from ..utils.errors import ConfigError
from ..utils.narrow import as_int, as_list
from ..utils.registry import POLICY_REGISTRY
from .base_policy import Policy, is_terminated
from .modes import PolicySettings
from .views import PolicyCollectConfig, PolicyConfig, PolicyLearnConfig, PolicyOtherConfig, ScheduleValue


class SequenceSettings(PolicySettings):
    """R2D2's samples are sequences: the collector cuts segments at sequence starts and keeps the
    next sequence's burn-in and n-step rows."""

    _cfg: R2D2Config  # (R2D2's typed config: the settings read its sequence lengths)

    @property
    def unroll_len(self) -> int:
        """Transitions between sequence starts (the collector cuts segments at multiples of it)."""
        return self._cfg.learn_unroll_len

    @property
    def lookahead(self) -> int:
        """Transitions a mid-episode segment keeps for the next one: its next sequence's burn-in and n-step rows."""
        return self._cfg.burnin_step + self._cfg.nstep


class RecurrentEpisodes:
    """What R2D2's collect mode carries inside episodes: each env's recurrent state (in the collect
    model) and which envs are inside an episode (``running``: their next step does not start one).
    Saved with a collector's checkpoint: a resumed run goes on with the same states (without them
    every open episode would restart from zeros mid-way)."""

    def __init__(self, collect_model: Any) -> None:
        self._model = collect_model
        self.running: Set[int] = set()

    def episode_state(self) -> Optional[Dict[str, object]]:
        return {"hidden": self._model.state.cpu().numpy().copy(), "running": sorted(self.running)}

    def load_episode_state(self, state: Dict[str, object]) -> None:
        self._model.set_state(torch.as_tensor(np.asarray(state["hidden"])))
        self.running.clear()
        self.running.update(as_int(i, "an episode state's env id") for i in as_list(state["running"], "an episode state's 'running'"))


@dataclass(frozen=True)
class R2D2LearnConfig(PolicyLearnConfig):
    update_per_collect: int = setting(1, "[1, inf)")
    # (int) sequences per gradient step.
    batch_size: int = setting(64, "[1, inf)")
    # (float|schedule) Adam step size; a schedule dict (stride.rl_utils.schedule) changes it per train_iter.
    learning_rate: ScheduleValue = setting(Scheduled(1e-4, "(0, inf)"))
    # (str) 'assign': copy every target_update_freq steps; 'momentum': Polyak averaging with target_theta.
    target_update_type: str = setting("momentum", ("assign", "momentum"))
    target_update_freq: int = setting(100, "[1, inf)")
    target_theta: float = setting(0.001, "(0, 1]")
    loss_type: str = setting("mse", ("mse", "huber"))
    # (float) sequence priority = eta * max |td| + (1 - eta) * mean |td| (the paper's 0.9).
    priority_eta: float = setting(0.9, "[0, 1]")
    grad_clip_norm: Optional[float] = setting(None, "(0, inf)")


@dataclass(frozen=True)
class R2D2CollectConfig(PolicyCollectConfig):
    # Give exactly one of n_sample (sequences per collect) / n_episode.
    n_sample: Optional[int] = setting(None, "[1, inf)", kind=int)
    n_episode: Optional[int] = setting(None, "[1, inf)", kind=int)


@dataclass(frozen=True)
class R2D2OtherConfig(PolicyOtherConfig):
    # (schedule|float) epsilon-greedy exploration, a schedule of collected env steps (stride.rl_utils.schedule).
    eps: ScheduleValue = setting(Scheduled(dict(type="exp", start=0.95, end=0.05, decay=10000), "[0, 1]", unit="env_step"))
    # (int) sequences kept.
    replay_buffer: Mapping[str, object] = declared(dict(replay_buffer_size=10000))


@dataclass(frozen=True)
class R2D2Config(PolicyConfig):
    type: str = "r2d2"
    on_policy: bool = False
    priority: bool = True
    priority_IS_weight: bool = True
    # (float) reward discount gamma.
    discount_factor: float = setting(0.997, "(0, 1]")
    # (int) steps summed in the TD target (inside a sequence, never across an episode end).
    nstep: int = setting(5, "[1, inf)")
    # (int) rows at a sequence start that only warm up the recurrent state (no loss).
    burnin_step: int = setting(20, "[0, inf)")
    # (int) rows learnt from per sequence; also the stride between sequence starts.
    learn_unroll_len: int = setting(80, "[1, inf)")
    # (bool) learn h(Q) with h(x) = sign(x)(sqrt(|x|+1)-1) + 1e-3 x (Pohlen et al., 2018).
    value_rescale: bool = True
    learn: R2D2LearnConfig = subsection(R2D2LearnConfig)
    collect: R2D2CollectConfig = subsection(R2D2CollectConfig)
    other: R2D2OtherConfig = subsection(R2D2OtherConfig)


@POLICY_REGISTRY.register("r2d2")
class R2D2Policy(Policy):
    """Recurrent double DQN on burnt-in sequences; ``collect_mode.forward`` takes ``eps=``."""

    settings = SequenceSettings
    config_view: ClassVar[Type[R2D2Config]] = R2D2Config
    _typed: R2D2Config
    _episodes: RecurrentEpisodes  # set by _init_collect

    @classmethod
    def default_model(cls) -> Tuple[str, Dict[str, object]]:
        return "drqn", {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._typed.random_collect_size:
            raise ConfigError(f"policy.random_collect_size={self._typed.random_collect_size}: r2d2 collects with its "
                              "own recurrent states only; valid choice: 0 (explore with policy.other.eps)")

    def _init_shared(self) -> None:
        self._burnin, self._unroll = self._typed.burnin_step, self._typed.learn_unroll_len
        self._nstep, self._gamma = self._typed.nstep, self._typed.discount_factor

    # ---- learn -------------------------------------------------------------------------------
    def _init_learn(self) -> None:
        self._init_shared()
        cfg = self._typed.learn
        self._optimizer = adam(self._model.parameters(), lr=self._schedules.value("learn.learning_rate"))
        kind = cfg.target_update_type
        kwargs = {"freq": cfg.target_update_freq} if kind == "assign" else {"theta": cfg.target_theta}
        self._target_model = model_wrap(copy.deepcopy(self._model), "target", update_type=kind, update_kwargs=kwargs)
        self._use_is = self._typed.priority and self._typed.priority_IS_weight

    def _forward_learn(self, data: Any) -> Dict[str, Any]:
        # data: (B, T, ...) columns -> time-major (T, B, ...)
        batch = self._io.learn_batch(data)
        obs = batch["obs"].transpose(0, 1)
        action, reward, done, last, mask = (batch[k].transpose(0, 1) for k in ("action", "reward", "done", "last", "mask"))
        state, start = batch["prev_state"].float(), batch["start"].bool()
        # forward from the stored state; burn-in rows pass gradient on only where the sequence starts its episode
        self._modes.set(True)
        b = self._burnin
        if b:
            head = self._model(obs[:b], state)
            warm = torch.where(start.unsqueeze(-1), head["next_state"], head["next_state"].detach())
            q = torch.cat([head["logit"], self._model(obs[b:], warm)["logit"]])
        else:
            q = self._model(obs, state)["logit"]
        with torch.no_grad():
            q_target = self._target_model.forward(obs, state)["logit"]
        # loss: the rows past the burn-in that no other sequence learns (see sequence_learnt_rows)
        train = sequence_learnt_rows(last, start, b, self._unroll)
        nstep = sequence_nstep_return(reward, done, last, mask, self._gamma, self._nstep)
        weight = batch.get("IS") if self._use_is else None
        weight = None if weight is None else weight.float()
        loss, td_abs = q_sequence_td_error(q, q_target, action, nstep, train, weight, self._typed.value_rescale,
                                           self._typed.learn.loss_type)
        # optimise
        lr = self._schedules.set_lr(self._optimizer)
        optimise(self._optimizer, loss, self._replicas, self._typed.learn.grad_clip_norm)
        # target update
        self._target_model.update(self._model)
        # log
        out: Dict[str, Any] = {"cur_lr": lr, "total_loss": loss.detach(),
                               "q_value": q.detach().mean()}
        if self._typed.priority:
            out["priority"] = sequence_priority(td_abs, train & nstep.valid, self._typed.learn.priority_eta).cpu().numpy()
        return out

    def _monitor_vars_learn(self) -> List[str]:
        return ["cur_lr", "total_loss", "q_value"]

    def _state_dict_learn(self) -> Dict[str, Any]:
        return {"model": self._model.state_dict(), "target_model": self._target_model.unwrapped().state_dict(),
                "target_update_count": self._target_model.update_count, "optimizer": self._optimizer.state_dict()}

    def _load_state_dict_learn(self, state_dict: Dict[str, Any]) -> None:
        self._model.load_state_dict(state_dict["model"])
        self._target_model.unwrapped().load_state_dict(state_dict["target_model"])
        self._target_model.reset(target_update_count=state_dict.get("target_update_count", 0))
        self._optimizer.load_state_dict(state_dict["optimizer"])

    # ---- collect -----------------------------------------------------------------------------
    def _init_collect(self) -> None:
        self._init_shared()
        # one state per env id (the store grows to the ids the collector sends)
        self._collect_model = model_wrap(model_wrap(self._model, "hidden_state", state_num=1, save_prev_state=True),
                                         "eps_greedy_sample")
        self._episodes = RecurrentEpisodes(self._collect_model)

    def _collect_kwargs(self, envstep: int = 0, train_iter: int = 0) -> Dict[str, Any]:
        return {"eps": self._schedules.value("other.eps", envstep, train_iter)}

    def _forward_collect(self, data: Dict[int, Any], eps: float = 0.0) -> Dict[int, Any]:
        ids, obs = self._io.obs_batch(data)
        self._modes.set(False)
        with torch.inference_mode():
            out = self._collect_model.forward(obs, data_id=ids, eps=eps)
        action, prev = out["action"].cpu().numpy(), out["prev_state"].cpu().numpy()
        running = self._episodes.running
        result = {i: {"action": action[k], "prev_state": prev[k], "start": i not in running} for k, i in enumerate(ids)}
        running.update(ids)
        return result

    def _process_transition(self, obs: Any, policy_output: Dict[str, Any], timestep: Any) -> Dict[str, Any]:
        if "prev_state" not in policy_output:  # a replayed demonstration step carries no recurrent state
            raise ConfigError(f"policy type '{self._typed.type}' stores no demonstrations (policy.collect.data_path); "
                              "valid choice for recurrent learning from demonstrations: 'r2d3'")
        terminated = is_terminated(timestep)
        return {"obs": obs, "action": policy_output["action"], "reward": timestep.reward, "next_obs": timestep.obs,
                "done": terminated, "truncated": bool(timestep.done) and not terminated,
                "prev_state": policy_output["prev_state"], "start": policy_output["start"]}

    def _get_train_sample(self, transitions: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """One segment of one env's episode -> sequences (``SequenceAdder``). A segment that stops
        mid-episode yields only its whole sequences; the collector keeps its last ``lookahead``
        transitions, where the next sequence starts."""
        items: List[Dict[str, Any]] = []
        adder = SequenceAdder(items.append, self._burnin + self._unroll + self._nstep, self._unroll)
        adder.add_first(transitions[0]["obs"], episode_start=bool(transitions[0]["start"]))
        for t in transitions:
            info = {"terminated": t["done"], "truncated": t["truncated"]}
            adder.add(t["next_obs"], t["reward"], t["done"] or t["truncated"], info, action=t["action"],
                      extras={"prev_state": t["prev_state"]})
        return [dict(item, prev_state=item["prev_state"][0], start=bool(item["start"][0])) for item in items]

    def _reset_collect(self, data_id: Optional[List[int]] = None) -> None:
        self._collect_model.reset(data_id=data_id)
        if data_id is None:
            self._episodes.running.clear()
        else:
            self._episodes.running.difference_update(data_id)

    # ---- eval --------------------------------------------------------------------------------
    def _init_eval(self) -> None:
        self._eval_model = model_wrap(model_wrap(self._model, "hidden_state", state_num=1), "argmax_sample")

    def _forward_eval(self, data: Dict[int, Any]) -> Dict[int, Any]:
        ids, obs = self._io.obs_batch(data)
        self._modes.set(False)
        with torch.inference_mode():
            action = self._eval_model.forward(obs, data_id=ids)["action"].cpu().numpy()
        return {i: {"action": a} for i, a in zip(ids, action)}

    def _reset_eval(self, data_id: Optional[List[int]] = None) -> None:
        self._eval_model.reset(data_id=data_id)

