"""PPO (Schulman et al., 2017) with GAE (Schulman et al., 2016) and the implementation details of
Engstrom et al. (2020) / Andrychowicz et al. (2021): advantage normalisation per minibatch, value
normalisation by running return statistics, clipped value loss, entropy bonus, gradient-norm clip.
Discrete (categorical) and continuous (diagonal Gaussian) action spaces, from ``model.action_space``.

Math: ``stride.rl_utils.ppo_error`` / ``ppo_error_continuous`` (loss) and ``get_gae`` (advantages).
Observations may be PettingZoo's ``{'observation', 'action_mask'}``: the model masks illegal actions.
One ``learn_mode.forward`` call trains on one collect: ``epoch_per_collect`` epochs of shuffled
minibatches, returning the averaged scalars (one learner ``train_iter`` per collect).

Better than DI-engine on purpose:
- GAE is computed once per collect, in ``_get_train_sample`` with the critic that is about to be
  trained; ``recompute_adv`` refreshes it only *between* epochs (DI computes it in the collector and
  again before the first epoch with the same weights).
- Collect mode never reads learn-mode state: the return statistics used to de-normalise values
  are part of the collect mode's own state dict (DI's collector reads the learner's
  ``_running_mean_std``, which breaks as soon as they live in different processes).
- Value normalisation uses mean and std (DI scales by the std only); truncated episodes bootstrap
  from the true final observation, terminated ones never do.
- Exploration bonus (RND, Burda et al., 2019): ``intrinsic_reward_key`` names a reward column a
  reward model adds (``'intrinsic_reward'``); the model's second value head (``critic_head_num=2``)
  learns its return, *non-episodic* (GAE never cut by an episode end: ``done`` is 0 for it and it
  bootstraps from ``V_int`` of the final observation, where the paper's one stream per env goes on
  into the next episode's first state), the extrinsic one stays episodic, and the
  advantage is ``extrinsic_adv_weight * A_ext + intrinsic_adv_weight * A_int`` (paper: 2 and 1);
  each head has its value loss. Both GAEs are the one ``get_gae``, computed at the start of
  learning (the bonus arrives after collection). DI-engine adds the bonus to the env's reward
  and learns one value.
- Continuous actions: the Gaussian sample is what the log-prob is taken of; the action sent to the
  env is that sample clipped to ``action_range``, so the policy never leaves the action space.
- ``learning_rate``, ``clip_ratio``, ``entropy_weight``, ``value_weight`` may be schedules
  (``stride.rl_utils.schedule``; DI-engine schedules the learning rate only). The adaptive KL
  penalty (Schulman et al., 2017, sec. 4; ``kl_coef``, ``kl_target``) adds to the clipped loss, as
  RLlib's does, with the exact KL (``kl_divergence``); its beta is in the learn state dict.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import torch

from ..model import model_wrap
from ..torch_utils import adam, cat_nested
from ..torch_utils.replica_sync import optimise
from ..torch_utils.dist import Moments, check_same
from ..rl_utils import adapt_kl_coef, get_gae, kl_divergence, ppo_error, ppo_error_continuous
from ..rl_utils.ppo import value_error
from ..rl_utils.schedule import Schedule, Scheduled
from ..utils.errors import ConfigError
from ..utils.registry import POLICY_REGISTRY
from ..config.view import fixed, setting, subsection
from .base_policy import Policy, is_terminated
from .views import ActionRange, PolicyCollectConfig, PolicyConfig, PolicyLearnConfig, ScheduleValue


class ReturnNormalizer:
    """Running mean/std of returns (parallel Welford) fed with each batch's (count, mean, biased
    variance) -- the policy's ``_replicas.moments``, so learner replicas feed the same union statistics and
    keep the same normaliser; the identity when disabled. Plain floats."""

    def __init__(self, enabled: bool) -> None:
        self.enabled, self.mean, self.var, self.count = bool(enabled), 0.0, 1.0, 1e-4

    def update(self, stats: Moments) -> None:
        if not self.enabled:
            return
        n, mean, var = stats[0], stats[1].item(), stats[2].item()
        delta, total = mean - self.mean, self.count + n
        self.var = (self.var * self.count + var * n + delta**2 * self.count * n / total) / total
        self.mean, self.count = self.mean + delta * n / total, total

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / (self.var**0.5 + 1e-8) if self.enabled else x

    def denormalize(self, x: torch.Tensor) -> torch.Tensor:
        return x * (self.var**0.5 + 1e-8) + self.mean if self.enabled else x

    def state_dict(self) -> Dict[str, float]:
        return {"mean": self.mean, "var": self.var, "count": self.count}

    def load_state_dict(self, sd: Dict[str, float]) -> None:
        self.mean, self.var, self.count = float(sd["mean"]), float(sd["var"]), float(sd["count"])


def _rows(logit: Any, idx: torch.Tensor) -> Any:
    return {k: v[idx] for k, v in logit.items()} if isinstance(logit, dict) else logit[idx]


@dataclass(frozen=True)
class ActorCriticLearnConfig(PolicyLearnConfig):
    # where the algorithm declares none: the critic predicts plain returns
    value_norm: bool = fixed(False)


@dataclass(frozen=True)
class ActorCriticConfig(PolicyConfig):
    """What the actor-critic modes read (PPO's, A2C's, IMPALA's); each algorithm declares its own keys."""

    # (float) reward discount gamma.
    discount_factor: float = setting(0.99, "(0, 1]")
    # ([low, high]|None) continuous actions sent to the env are clipped to these bounds (scalars or
    # per-dimension lists; None: the entry fills them from its env's Box action space).
    action_range: ActionRange = None
    # where the algorithm declares none: GAE(1) advantages, no intrinsic reward
    gae_lambda: float = fixed(1.0)
    intrinsic_reward_key: Optional[str] = fixed(None)
    learn: ActorCriticLearnConfig = subsection(ActorCriticLearnConfig)


@dataclass(frozen=True)
class PPOLearnConfig(ActorCriticLearnConfig):
    # (int) passes over each collect's samples.
    epoch_per_collect: int = setting(10, "[1, inf)")
    # (int) samples per minibatch (the last minibatch of an epoch may be smaller).
    batch_size: int = setting(64, "[1, inf)")
    # (float|schedule) Adam step size; a schedule dict (stride.rl_utils.schedule) changes it per train_iter.
    learning_rate: ScheduleValue = setting(Scheduled(3e-4, "(0, inf)"))
    # (int) anneal the learning rate linearly to 0 over this many collects (0: constant); the same
    # as learning_rate=dict(type='linear', start=1, end=0, steps=N, scale=<learning_rate>).
    lr_anneal_collects: int = setting(0, "[0, inf)")
    # (bool) recompute values and advantages with the current critic before each epoch after the first.
    recompute_adv: bool = True
    # (bool) normalise advantages per minibatch.
    adv_norm: bool = True
    # (bool) the critic predicts returns normalised by their running mean/std.
    value_norm: bool = True
    # (float|schedule) PPO's epsilon: the policy ratio is clipped to [1-eps, 1+eps].
    clip_ratio: ScheduleValue = setting(Scheduled(0.2, "(0, 1)"))
    # (float|None) clip the value update around the old value (None: no clip).
    value_clip_ratio: Optional[float] = setting(0.2, "(0, inf)", optional=True)
    # (float|None) dual-clip constant c > 1 (Ye et al., 2020); None: off.
    dual_clip: Optional[float] = setting(None, "(1, inf)")
    # (float|schedule) weights of the value loss and of the entropy bonus.
    value_weight: ScheduleValue = setting(Scheduled(0.5, "[0, inf)"))
    entropy_weight: ScheduleValue = setting(Scheduled(0.0, "[0, inf)"))
    # (float) beta of the KL penalty beta * KL(pi_old || pi) (0: none); with kl_target, its first value.
    kl_coef: float = setting(0.0, "[0, inf)")
    # (float|None) adapt beta after each collect to keep the KL near this (the paper's d_targ); None: fixed.
    kl_target: Optional[float] = setting(None, "(0, inf)")
    # (float|None) clip the gradient norm to this value.
    grad_clip_norm: Optional[float] = setting(0.5, "(0, inf)", optional=True)


@dataclass(frozen=True)
class PPOCollectConfig(PolicyCollectConfig):
    # (int) transitions per collect (one learner train_iter trains on them).
    n_sample: Optional[int] = setting(None, "[1, inf)", kind=int)
    n_episode: Optional[int] = setting(None, "[1, inf)", kind=int)


@dataclass(frozen=True)
class PPOConfig(ActorCriticConfig):
    type: str = "ppo"
    on_policy: bool = True
    # (float) GAE lambda; 1.0 gives discounted returns bootstrapped at the segment's end.
    gae_lambda: float = setting(0.95, "[0, 1]")
    # (str|None) a reward column added by a reward model (RND: 'intrinsic_reward'), learnt by the
    # model's second value head (model.critic_head_num=2) as a non-episodic return; None: off.
    intrinsic_reward_key: Optional[str] = None
    # (float) discount of the intrinsic return (RND paper: 0.99, beside 0.999 for the extrinsic one).
    intrinsic_discount_factor: float = setting(0.99, "(0, 1]")
    # (float) weights of the extrinsic / intrinsic advantages in the policy loss (RND paper: 2 and 1).
    extrinsic_adv_weight: float = setting(2.0, "[0, inf)")
    intrinsic_adv_weight: float = setting(1.0, "[0, inf)")
    learn: PPOLearnConfig = subsection(PPOLearnConfig)
    collect: PPOCollectConfig = subsection(PPOCollectConfig)


class ActorCriticPolicy(Policy):
    """What PPO, A2C and IMPALA share: the return statistics, the action-space handling, the collect
    mode (samples from the policy, GAE per segment) and the eval mode (the argmax / the Gaussian mean).
    Each algorithm adds its learn step and its config."""

    _typed: ActorCriticConfig
    _kl_coef: float  # PPO's KL penalty beta (set by each learn mode's init; 0: none), saved in the learn state

    @classmethod
    def default_model(cls) -> Tuple[str, Dict[str, object]]:
        return "vac", {}

    def _action_space(self) -> str:
        return str(getattr(self._model, "action_space", self._typed.model.get("action_space", "discrete")))

    def _init_shared(self) -> None:
        """State every mode reads: the return statistics (each mode's state dict carries them)."""
        if not hasattr(self, "_return_norm"):
            self._return_norm = ReturnNormalizer(self._typed.learn.value_norm)
            self._continuous = self._action_space() == "continuous"
            bounds = self._action_scale.bounds
            self._act_low = None if bounds is None else torch.as_tensor(bounds[0], device=self._device)
            self._act_high = None if bounds is None else torch.as_tensor(bounds[1], device=self._device)
            self._intrinsic = self._typed.intrinsic_reward_key
            heads = int(getattr(self._model, "critic_head_num", 1))
            if heads != (1 if self._intrinsic is None else 2):
                raise ConfigError(f"policy.intrinsic_reward_key={self._intrinsic!r} needs a model with "
                                  f"{1 if self._intrinsic is None else 2} value head(s) (policy.model.critic_head_num), "
                                  f"got {heads}")

    def _values(self, model: Any, obs: Any) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """Extrinsic values (de-normalised) and, with an intrinsic head, the intrinsic ones (not normalised:
        the reward model already scales the bonus)."""
        value = model.forward(obs, mode="compute_critic")["value"]
        if self._intrinsic is None:
            return self._return_norm.denormalize(value), None
        return self._return_norm.denormalize(value[:, 0]), value[:, 1]


    def _state_dict_learn(self) -> Dict[str, Any]:
        return {"model": self._model.state_dict(), "optimizer": self._optimizer.state_dict(),
                "return_norm": self._return_norm.state_dict(), "kl_coef": self._kl_coef}

    def _load_state_dict_learn(self, state_dict: Dict[str, Any]) -> None:
        self._model.load_state_dict(state_dict["model"])
        self._optimizer.load_state_dict(state_dict["optimizer"])
        self._return_norm.load_state_dict(state_dict["return_norm"])
        self._kl_coef = float(state_dict.get("kl_coef", self._kl_coef))
        if "scheduler" in state_dict and "schedule_counters" not in state_dict:  # a checkpoint from before schedules
            self._schedules.counters["train_iter"] = int(state_dict["scheduler"]["last_epoch"])

    # ---- collect -----------------------------------------------------------------------------
    def _init_collect(self) -> None:
        self._init_shared()
        self._collect_model = model_wrap(self._model, "base" if self._continuous else "multinomial_sample")

    @torch.no_grad()
    def _forward_collect(self, data: Dict[int, Any]) -> Dict[int, Any]:
        ids, obs = self._io.obs_batch(data)
        self._modes.set(False)
        out = self._collect_model.forward(obs, mode="compute_actor")
        if not self._continuous:
            action, logit = out["action"].cpu().numpy(), out["logit"].cpu().numpy()
            return self._tag({env_id: {"action": action[i], "logit": logit[i]} for i, env_id in enumerate(ids)})
        mu, sigma = out["logit"]["mu"], out["logit"]["sigma"]
        raw = mu + sigma * torch.randn_like(mu)
        action, raw, mu, sigma = (t.cpu().numpy() for t in (self._clip(raw), raw, mu, sigma))
        return self._tag({env_id: {"action": action[i], "raw_action": raw[i], "logit": {"mu": mu[i], "sigma": sigma[i]}}
                          for i, env_id in enumerate(ids)})

    def _tag(self, outputs: Dict[int, Dict[str, Any]]) -> Dict[int, Any]:
        """With an intrinsic reward, each output (and so its transition) carries its ``env_id``: RND's
        intrinsic return runs per env, across episodes and collects."""
        if self._intrinsic is not None:
            for env_id, out in outputs.items():
                out["env_id"] = env_id
        return outputs

    def _clip(self, action: torch.Tensor) -> torch.Tensor:
        return action if self._act_low is None else torch.clamp(action, self._act_low, self._act_high)

    def _process_transition(self, obs: Any, policy_output: Dict[str, Any], timestep: Any) -> Dict[str, Any]:
        # done = terminated: a time-limit truncation still bootstraps from the true final obs.
        terminated = is_terminated(timestep)
        transition = {"obs": obs, "action": policy_output.get("raw_action", policy_output["action"]),
                      "logit": policy_output["logit"], "reward": float(timestep.reward), "next_obs": timestep.obs,
                      "done": bool(terminated)}
        if "env_id" in policy_output:
            transition["env_id"] = policy_output["env_id"]
        return transition

    @torch.no_grad()
    def _get_train_sample(self, transitions: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """GAE over one segment of one env's episode. It ends at a termination (no bootstrap), a
        truncation (bootstrap from V(true final obs)) or mid-episode (bootstrap from V(last next_obs))."""
        self._modes.set(False)
        _, obs_t = self._io.obs_batch(dict(enumerate([t["obs"] for t in transitions] + [transitions[-1]["next_obs"]])))
        value, _ = self._values(self._model, obs_t)  # (obs_batch: float64 -> float32, obs_norm)
        reward = torch.tensor([t["reward"] for t in transitions], dtype=torch.float32, device=self._device)
        done = torch.tensor([t["done"] for t in transitions], dtype=torch.float32, device=self._device)
        traj_flag = torch.zeros_like(done)
        traj_flag[-1] = 1.0
        adv = get_gae(value[:-1], value[1:], reward, done, self._typed.discount_factor, self._typed.gae_lambda, traj_flag)
        values, advs = value[:-1].tolist(), adv.tolist()
        last = len(transitions) - 1
        return [{**t, "value": values[i], "adv": advs[i], "return": values[i] + advs[i], "traj_flag": i == last}
                for i, t in enumerate(transitions)]

    def _state_dict_collect(self) -> Dict[str, Any]:
        return {"model": self._model.state_dict(), "return_norm": self._return_norm.state_dict()}

    def _load_state_dict_collect(self, state_dict: Dict[str, Any]) -> None:
        self._model.load_state_dict(state_dict["model"])
        if "return_norm" in state_dict:
            self._return_norm.load_state_dict(state_dict["return_norm"])

    # ---- eval --------------------------------------------------------------------------------
    def _init_eval(self) -> None:
        self._init_shared()
        self._eval_model = model_wrap(self._model, "base" if self._continuous else "argmax_sample")

    @torch.no_grad()
    def _forward_eval(self, data: Dict[int, Any]) -> Dict[int, Any]:
        ids, obs = self._io.obs_batch(data)
        self._modes.set(False)
        out = self._eval_model.forward(obs, mode="compute_actor")
        action = (self._clip(out["logit"]["mu"]) if self._continuous else out["action"]).cpu().numpy()
        return {env_id: {"action": action[i]} for i, env_id in enumerate(ids)}


@POLICY_REGISTRY.register("ppo")
class PPOPolicy(ActorCriticPolicy):
    """PPO-clip; collect samples actions from the policy, eval takes the argmax / the Gaussian mean."""

    config_view = PPOConfig
    _typed: PPOConfig

    # ---- learn -------------------------------------------------------------------------------
    def _init_learn(self) -> None:
        self._init_shared()
        cfg = self._typed.learn
        n = cfg.lr_anneal_collects
        if n:  # CleanRL's annealing: learning_rate * max(1 - i / n, 0), the LambdaLR it replaces, bit for bit
            if not isinstance(cfg.learning_rate, (int, float)):
                raise ConfigError(f"policy.learn.lr_anneal_collects={n} anneals a constant learning_rate, got the "
                                  f"schedule {cfg.learning_rate!r}: give one of them")
            self._schedules.set("learn.learning_rate", Schedule("linear", start=1.0, end=0.0, steps=n, scale=cfg.learning_rate))
        self._optimizer = adam(self._model.parameters(), lr=self._schedules.value("learn.learning_rate"), eps=1e-5)
        self._kl_coef = cfg.kl_coef
        if cfg.kl_target is not None and self._kl_coef <= 0:
            raise ConfigError(f"policy.learn.kl_target={cfg.kl_target} adapts the KL penalty's beta, which starts at "
                              f"policy.learn.kl_coef: give kl_coef > 0 (the paper starts at 1), got {self._kl_coef}")
        self._learn_model = model_wrap(self._model, "base")
        self._loss_fn = ppo_error_continuous if self._continuous else ppo_error

    def _forward_learn(self, data: Any) -> Dict[str, Any]:
        # data: one collect's samples, in trajectory order (segments end with traj_flag)
        cfg = self._typed.learn
        batch = self._learn_batch(data)
        n = batch["action"].shape[0]
        lr = self._schedules.set_lr(self._optimizer)
        weights = {"clip_ratio": self._schedules.value("learn.clip_ratio"), "kl_coef": self._kl_coef,
                   "entropy_weight": self._schedules.value("learn.entropy_weight"),
                   "value_weight": self._schedules.value("learn.value_weight")}
        # log sums stay detached tensors: no host sync per minibatch (on a GPU the loop never waits for it)
        sums: Dict[str, torch.Tensor] = defaultdict(lambda: torch.zeros((), device=self._device))
        steps = 0
        for epoch in range(cfg.epoch_per_collect):
            if epoch > 0 and cfg.recompute_adv:
                self._recompute_adv(batch)
            value_old, return_ = self._return_norm.normalize(batch["value"]), self._return_norm.normalize(batch["return"])
            for idx in torch.split(torch.randperm(n, device=self._device), cfg.batch_size):
                self._minibatch_step(batch, idx, value_old[idx], return_[idx], weights, sums)
                steps += 1
        if cfg.kl_target is not None:  # beta for the next collect, from the KL after this update
            with torch.no_grad():
                kl = kl_divergence(batch["logit"], self._learn_model.forward(batch["obs"], mode="compute_actor")["logit"])
            self._kl_coef = adapt_kl_coef(self._kl_coef, float(self._replicas.moments(kl)[1]), cfg.kl_target)
        means = {f"{k}_mean": batch[k].detach().mean()
                 for k in ("adv", "value", "return", "adv_int", "return_int") if k in batch}
        extra = {"kl_coef": weights["kl_coef"]} if weights["kl_coef"] > 0 else {}
        return {"cur_lr": lr, **{k: v / steps for k, v in sums.items()}, **means, **extra}

    def _learn_batch(self, data: Any) -> Dict[str, torch.Tensor]:
        """The collect's samples as tensors in train mode, with the intrinsic GAE (when a reward model
        added its bonus after collection) and the return statistics of this batch."""
        cfg = self._typed.learn
        batch = self._io.learn_batch(data)
        self._modes.set(True)
        if self._intrinsic is not None:  # the bonus arrived after collection: both GAEs now
            if self._intrinsic not in batch:
                raise ConfigError(f"policy.intrinsic_reward_key='{self._intrinsic}' but the batch has no such column "
                                  f"(it has {sorted(batch)}): add the reward model that writes it, "
                                  f"e.g. reward_model=dict(type='rnd')")
            self._recompute_adv(batch)
        if self._return_norm.enabled:  # the same on every replica: their collectives pair up
            self._return_norm.update(self._replicas.moments(batch["return"]))
        if self._replicas.distributed:  # each minibatch all-reduces: every replica must make as many
            n = batch["action"].shape[0]
            check_same(-(-n // cfg.batch_size), f"the minibatches per epoch (samples per collect / batch_size {cfg.batch_size})")
        return batch

    def _minibatch_step(self, batch: Dict[str, torch.Tensor], idx: torch.Tensor, value_old: torch.Tensor,
                        return_: torch.Tensor, weights: Dict[str, float], sums: Dict[str, torch.Tensor]) -> None:
        """One optimiser step on the rows ``idx`` of ``batch`` (``value_old`` / ``return_``: theirs,
        normalised); the losses are added to ``sums``."""
        cfg = self._typed.learn
        # forward
        out = self._learn_model.forward(_rows(batch["obs"], idx), mode="compute_actor_critic")
        value = out["value"] if self._intrinsic is None else out["value"][:, 0]
        adv = batch["adv"][idx]
        if cfg.adv_norm:  # over all replicas' minibatches with multi_gpu: the union's statistics
            adv = self._replicas.standardize(adv)
        # loss
        loss, info = self._loss_fn(out["logit"], _rows(batch["logit"], idx), batch["action"][idx], value,
                                   value_old, adv, return_, weights["clip_ratio"], cfg.value_clip_ratio, cfg.dual_clip)
        value_loss = loss.value_loss
        if self._intrinsic is not None:  # the intrinsic head's own value loss
            value_loss_int = value_error(out["value"][:, 1], batch["value_int"][idx], batch["return_int"][idx],
                                         cfg.value_clip_ratio)
            sums["value_loss_int"] += value_loss_int.detach()
            value_loss = value_loss + value_loss_int
        total = loss.policy_loss + weights["value_weight"] * value_loss - weights["entropy_weight"] * loss.entropy_loss
        if weights["kl_coef"] > 0:
            kl = kl_divergence(_rows(batch["logit"], idx), out["logit"]).mean()
            total = total + weights["kl_coef"] * kl
            sums["kl"] += kl.detach()
        # optimise
        grad_norm = optimise(self._optimizer, total, self._replicas, cfg.grad_clip_norm)
        if grad_norm is not None:
            sums["grad_norm"] += grad_norm.detach()
        # log
        for k, v in (("total_loss", total), ("policy_loss", loss.policy_loss), ("value_loss", loss.value_loss),
                     ("entropy", loss.entropy_loss), ("approx_kl", info.approx_kl), ("clipfrac", info.clipfrac)):
            sums[k] += v.detach()

    @torch.no_grad()
    def _recompute_adv(self, batch: Dict[str, torch.Tensor]) -> None:
        """Values and GAE of the whole collect with the current critic (segments stay apart by traj_flag);
        with an intrinsic head also its non-episodic GAE, and ``adv`` the weighted sum of both."""
        n = batch["action"].shape[0]
        value, value_int = self._values(self._learn_model, cat_nested([batch["obs"], batch["next_obs"]]))
        adv = get_gae(value[:n], value[n:], batch["reward"].float(), batch["done"], self._typed.discount_factor,
                      self._typed.gae_lambda, batch["traj_flag"])
        batch["value"], batch["adv"], batch["return"] = value[:n], adv, value[:n] + adv
        if value_int is not None:  # done = 0: an episode's end never cuts the intrinsic return
            reward_int, never_done = batch[str(self._intrinsic)].float(), torch.zeros_like(batch["done"])
            adv_int = get_gae(value_int[:n], value_int[n:], reward_int, never_done, self._typed.intrinsic_discount_factor,
                              self._typed.gae_lambda, batch["traj_flag"])
            batch["value_int"], batch["adv_int"], batch["return_int"] = value_int[:n], adv_int, value_int[:n] + adv_int
            batch["adv"] = self._typed.extrinsic_adv_weight * adv + self._typed.intrinsic_adv_weight * adv_int

    def _monitor_vars_learn(self) -> List[str]:
        extra = [] if self._intrinsic is None else ["value_loss_int"]
        if self._kl_coef > 0:
            extra.append("kl")
        return ["cur_lr", "total_loss", "policy_loss", "value_loss", *extra, "entropy", "approx_kl", "clipfrac"]
