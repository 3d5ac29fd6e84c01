"""``BaseSerialEvaluator``: run the eval-mode policy for exactly ``n_episode`` episodes.

``VectorEvalMonitor`` gives each env a fixed quota (``n_episode // env_num``, +1 for the first
``n_episode % env_num`` envs), so short episodes can't crowd out long ones and bias the mean. An
env whose quota is full is no longer stepped (DI-engine keeps stepping it and keeps the *latest*
episodes, which is why its logs repeat). The manager is reset at every evaluation; with a fixed
(non-dynamic) seed that replays the same sequence of distinct episodes each time.

An evaluation can be cut short: ``eval(should_stop=...)`` is asked between env steps, and a stop
request (the run's Ctrl-C / SIGTERM) abandons the evaluation at once with :class:`EvalAbandoned`
(nothing recorded; the point counts as not evaluated, so a resumed run evaluates it again). A
100-episode confirmation can take minutes, and a scheduler's SIGTERM (SLURM, Kubernetes) gives a
grace period of seconds before its SIGKILL: waiting for the evaluation to end would lose the
checkpoint the signal asked for. SB3's EvalCallback and DI-engine's evaluator finish the evaluation first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np

from ..config.config import Configurable
from ..config.view import ConfigView, setting
from ..policy.modes import EvalMode
from ..utils.errors import ConfigError, StrideError
from ..utils.log import build_logger
from ..utils.narrow import as_float, as_int, as_mapping, as_optional_int
from ..utils.registry import EVALUATOR_REGISTRY
from .protocols import EnvManager, ScalarWriter

class EvalAbandoned(Exception):
    """An evaluation cut short by its ``should_stop`` (a stop request); it recorded nothing."""


#: what an evaluation episode scores (``metric``)
METRICS = ("return", "success")


class VectorEvalMonitor:
    """Per-env episode quotas summing to ``n_episode``."""

    def __init__(self, env_num: int, n_episode: int) -> None:
        if n_episode < 1:
            raise ConfigError(f"n_episode must be >= 1, got {n_episode}")
        self._quota = [n_episode // env_num + (1 if i < n_episode % env_num else 0) for i in range(env_num)]
        self._returns: Dict[int, List[float]] = {i: [] for i in range(env_num)}
        self._infos: Dict[int, List[Mapping[str, object]]] = {i: [] for i in range(env_num)}

    def needs_more(self, env_id: int) -> bool:
        return len(self._returns[env_id]) < self._quota[env_id]

    def update_info(self, env_id: int, info: Mapping[str, object]) -> None:
        self._infos[env_id].append(info)

    def update_reward(self, env_id: int, episode_return: float) -> None:
        if self.needs_more(env_id):
            self._returns[env_id].append(float(episode_return))

    def is_finished(self) -> bool:
        return all(not self.needs_more(i) for i in self._returns)

    def get_episode_return(self) -> List[float]:
        """All returns, env by env."""
        return [r for i in sorted(self._returns) for r in self._returns[i]]

    def get_current_episode(self) -> int:
        return sum(len(v) for v in self._returns.values())


@dataclass(frozen=True)
class BestEvaluation:
    """The best evaluation of a run: its score (the confirmation's mean where ``return_best``
    confirmed it), where it was made, and the checkpoint saved then (None without a folder)."""

    score: float
    train_iter: int
    envstep: int
    checkpoint: Optional[str]

    def state_dict(self) -> Dict[str, object]:
        return {"score": self.score, "train_iter": self.train_iter, "envstep": self.envstep,
                "checkpoint": self.checkpoint}

    @classmethod
    def from_state(cls, state: Mapping[str, object]) -> "BestEvaluation":
        ckpt = state.get("checkpoint")
        return cls(as_float(state["score"], "evaluator state 'best.score'"),
                   as_int(state["train_iter"], "evaluator state 'best.train_iter'"),
                   as_int(state["envstep"], "evaluator state 'best.envstep'"),
                   None if ckpt is None else str(ckpt))


@dataclass(frozen=True)
class EvaluatorConfig(ConfigView):
    """``policy.eval.evaluator``: what :class:`BaseSerialEvaluator` reads."""

    #: (int) evaluate every this many train iterations.
    eval_freq: int = setting(1000, "[1, inf)")
    #: (int) evaluate every this many collected env steps instead (0: by eval_freq).
    eval_freq_envstep: int = setting(0, "[0, inf)")
    #: (float) filled from env.stop_value by compile_config.
    stop_value: float = float("inf")
    #: (int) filled from env.n_evaluator_episode by compile_config.
    n_episode: int = setting(10, "[1, inf)")
    #: (int) 0: stop when the n_episode evaluation reaches stop_value. N > 0: such an evaluation
    #: is only a screen; N further episodes of the same policy must reach it too.
    confirm_episode: int = setting(0, "[0, inf)")
    #: (float) with confirm_episode: the confirmation passes only when its mean minus this many
    #: standard errors of that mean (sample std / sqrt(N)) reaches stop_value; 0: the mean itself.
    confirm_std_errors: float = setting(0.0, "[0, inf)")
    #: (str) what an episode scores: 'return' (info['eval_episode_return']) or 'success' (1.0 when
    #: the last step's info['is_success'] is true, Gymnasium-Robotics' goal envs): stop_value and
    #: the logged means are then a success rate.
    metric: str = setting("return", METRICS)
    #: (bool) a serial, offline or parallel run that ends at its limits (neither on the stop rule nor
    #: interrupted) returns the policy of its best evaluation (``ckpt/ckpt_best.pth.tar``), not its
    #: last one. With confirm_episode N, a screen above the best so far is confirmed on N more
    #: episodes and the best is ranked by the confirmations' means, so one lucky screen is not what
    #: the run returns.
    return_best: bool = False


@EVALUATOR_REGISTRY.register("base")
class BaseSerialEvaluator(Configurable):
    """Evaluate a policy's eval mode on its own env manager."""

    config_view = EvaluatorConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None, env: Optional[EnvManager] = None,
                 policy: Optional[EvalMode] = None, tb_logger: Optional[ScalarWriter] = None,
                 exp_name: Optional[str] = None, instance_name: str = "evaluator") -> None:
        self._cfg = self.typed_config(EvaluatorConfig, cfg, prefix="policy.eval.evaluator.")
        self._env = env
        self._policy = policy
        self._tb = tb_logger
        self._logger = build_logger(exp_name, instance_name)
        self._instance_name = instance_name
        self._last_eval_iter: Optional[int] = None
        self._last_eval_mark: Optional[int] = None  # envstep // eval_freq_envstep at the last evaluation
        self._marks_before: Tuple[Optional[int], Optional[int]] = (None, None)  # (iter, mark) before the last should_eval
        self._max_eval_return = -float("inf")
        self._best: Optional[BestEvaluation] = None
        self.last_eval_return: Optional[float] = None
        self.last_confirm_return: Optional[float] = None
        self.last_eval_cpu_seconds = 0.0

    def reset_env(self, env: Optional[EnvManager] = None) -> None:
        """Evaluate on ``env`` from now on (``None``: keep the current one)."""
        if env is not None:
            self._env = env

    def reset_policy(self, policy: Optional[EvalMode] = None) -> None:
        """Evaluate ``policy`` from now on (``None``: keep the current one)."""
        if policy is not None:
            self._policy = policy

    def _require(self) -> Tuple[EnvManager, EvalMode]:
        if self._env is None or self._policy is None:
            raise StrideError("BaseSerialEvaluator needs an env manager and a policy: give them to reset()")
        return self._env, self._policy

    def reset(self, policy: Optional[EvalMode] = None, env: Optional[EnvManager] = None) -> None:
        """``reset_env(env)`` then ``reset_policy(policy)``."""
        self.reset_env(env)
        self.reset_policy(policy)

    def should_eval(self, train_iter: int, envstep: Optional[int] = None) -> bool:
        """True at the first call and every ``eval_freq`` train iterations after the last evaluation
        (with ``eval_freq_envstep``: whenever ``envstep`` passed another multiple of it)."""
        freq = self._cfg.eval_freq_envstep
        before = (self._last_eval_iter, self._last_eval_mark)
        if freq and envstep is not None:
            mark = int(envstep) // int(freq)
            if self._last_eval_mark is not None and mark <= self._last_eval_mark:
                return False
            self._last_eval_mark = mark
            self._last_eval_iter = train_iter
            self._marks_before = before
            return True
        if self._last_eval_iter is not None and (
            train_iter == self._last_eval_iter or train_iter - self._last_eval_iter < self._cfg.eval_freq
        ):
            return False
        self._last_eval_iter = train_iter
        self._marks_before = before
        return True

    def eval(self, save_ckpt_fn: Optional[Callable[[str], object]] = None, train_iter: int = -1, envstep: int = -1,
             n_episode: Optional[int] = None, should_stop: Optional[Callable[[], bool]] = None
             ) -> Tuple[bool, List[float]]:
        """Run ``n_episode`` episodes; return ``(stop, episode_returns)`` with ``stop`` when the mean
        return reaches ``stop_value``. Saves ``ckpt_best.pth.tar`` through ``save_ckpt_fn`` on a new best.
        ``should_stop`` is asked between env steps: when it says True the evaluation raises
        :class:`EvalAbandoned` (its CPU still counted in ``last_eval_cpu_seconds``) and the latest
        :meth:`should_eval` is undone.

        With ``confirm_episode`` N, an evaluation that reaches ``stop_value`` is a screen: N further
        episodes of the same policy (the ones that follow in the eval envs' seed streams, so none of
        the screen's) must reach it too, and their returns are the ones returned. A cheap frequent
        screen finds good policies early; the confirmation keeps one lucky screen from stopping a
        run with a policy that does not hold (SB3's EvalCallback and DI-engine stop on one evaluation);
        ``confirm_std_errors`` asks the confirmation for a margin (:meth:`confirm_lower_bound`).
        With ``return_best`` a screen above the best so far is confirmed too, and :attr:`best`
        ranks evaluations by their confirmations' means."""
        n_episode = n_episode if n_episode is not None else self._cfg.n_episode
        cpu0 = time.process_time()
        env, _ = self._require()
        if env.closed:
            env.launch()
        else:
            env.reset()
        try:
            returns = self._episodes(n_episode, train_iter, envstep, self._instance_name, should_stop)
            mean = float(np.mean(returns))
            self.last_eval_return, self.last_confirm_return = mean, None
            stop = mean >= self._cfg.stop_value and train_iter > 0
            candidate = mean > self._max_eval_return and save_ckpt_fn is not None  # within a run
            if (stop or (candidate and self._cfg.return_best)) and self._cfg.confirm_episode > 0:
                returns = self._episodes(self._cfg.confirm_episode, train_iter, envstep,
                                         f"{self._instance_name}_confirm", should_stop)
                self.last_confirm_return = float(np.mean(returns))
                stop = stop and self.confirm_lower_bound(returns) >= self._cfg.stop_value
                if self._cfg.return_best:  # ranked by the confirmation, not by the screen
                    mean = self.last_confirm_return
            if mean > self._max_eval_return:
                self._max_eval_return = mean
                # evaluation bookkeeping: counted as evaluation time
                path = save_ckpt_fn("ckpt_best.pth.tar") if save_ckpt_fn is not None else None
                self._best = BestEvaluation(mean, train_iter, envstep, path if isinstance(path, str) else None)
        except EvalAbandoned:
            self.last_eval_cpu_seconds = time.process_time() - cpu0
            self._last_eval_iter, self._last_eval_mark = self._marks_before
            raise
        self.last_eval_cpu_seconds = time.process_time() - cpu0
        return stop, returns

    def confirm_lower_bound(self, returns: List[float]) -> float:
        """The confirmation's mean less ``confirm_std_errors`` standard errors of it: what must reach
        ``stop_value``. The first confirmation to clear a threshold is the luckiest of several tries,
        so a policy confirmed at its bare mean sits near the threshold and the next 100 episodes fall
        under it about half the time; a bound that widens with the episodes' spread (a policy that
        sometimes crashes) keeps such a policy training until it clears the threshold with room."""
        mean = float(np.mean(returns))
        k = self._cfg.confirm_std_errors
        if k == 0 or len(returns) < 2:
            return mean
        return mean - k * float(np.std(returns, ddof=1)) / float(np.sqrt(len(returns)))

    def _score(self, info: Mapping[str, object]) -> float:
        """An ended episode's score under ``metric`` (from its last timestep's ``info``)."""
        if self._cfg.metric == "return":
            return as_float(info["eval_episode_return"], "info['eval_episode_return']")
        if "is_success" not in info:
            raise ConfigError(f"policy.eval.evaluator.metric='success' needs info['is_success'] at an episode's end; "
                              f"this env's info has {sorted(info)} (valid metrics: {', '.join(METRICS)})")
        return float(bool(info["is_success"]))

    def _episodes(self, n_episode: int, train_iter: int, envstep: int, tag: str,
                  should_stop: Optional[Callable[[], bool]] = None) -> List[float]:
        """Returns of ``n_episode`` episodes from the envs as they stand (balanced over envs); logged.
        Raises :class:`EvalAbandoned` as soon as ``should_stop()`` says True (checked every env step)."""
        env, policy = self._require()
        wall0 = time.perf_counter()
        policy.reset()
        monitor = VectorEvalMonitor(env.env_num, n_episode)
        steps = 0
        stalls = 0
        while not monitor.is_finished():
            if should_stop is not None and should_stop():
                self._logger.info(f"[{tag}] train_iter={train_iter} envstep={envstep} abandoned after "
                                  f"{monitor.get_current_episode()} of {n_episode} episodes: a stop was requested")
                raise EvalAbandoned(f"{tag} at train_iter={train_iter} abandoned: a stop was requested")
            obs = {i: o for i, o in env.ready_obs.items() if monitor.needs_more(i)}
            if obs:
                output = policy.forward(obs)
                timesteps = env.step({i: o["action"] for i, o in output.items()})
            else:  # envs still needing episodes are busy (an async manager): wait for them
                timesteps = env.step({})
                stalls = 0 if timesteps else stalls + 1
                if stalls > 100:
                    raise RuntimeError("evaluator: no env is ready although episodes are missing")
            steps += len(timesteps)
            for env_id, ts in timesteps.items():
                if ts.done:
                    policy.reset([env_id])
                    if not ts.info.get("abnormal"):
                        monitor.update_reward(env_id, self._score(ts.info))
        returns = monitor.get_episode_return()
        wall = time.perf_counter() - wall0
        stats = {"reward_mean": float(np.mean(returns)), "reward_std": float(np.std(returns)),
                 "reward_max": float(np.max(returns)), "reward_min": float(np.min(returns)),
                 "episode_count": len(returns), "envstep_count": steps, "avg_envstep_per_sec": steps / max(wall, 1e-9)}
        self._logger.info(f"[{tag}] train_iter={train_iter} envstep={envstep} "
                          + " ".join(f"{k}={v:.4g}" for k, v in stats.items()))
        if self._tb is not None:
            for k, v in stats.items():
                self._tb.add_scalar(f"{tag}_iter/{k}", v, train_iter)
                self._tb.add_scalar(f"{tag}_step/{k}", v, envstep)
        return returns

    @property
    def return_best(self) -> bool:
        """Whether a run that ends at its limits returns its best evaluation's policy (``return_best``)."""
        return bool(self._cfg.return_best)

    @property
    def best(self) -> Optional[BestEvaluation]:
        """The best evaluation so far (where ``ckpt_best.pth.tar`` was saved); None before the first."""
        return self._best

    def state_dict(self) -> Dict[str, object]:
        return {"last_eval_iter": self._last_eval_iter, "last_eval_mark": self._last_eval_mark,
                "max_eval_return": self._max_eval_return,
                "best": None if self._best is None else self._best.state_dict()}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self._last_eval_iter = as_optional_int(state["last_eval_iter"], "evaluator state 'last_eval_iter'")
        self._last_eval_mark = as_optional_int(state.get("last_eval_mark"), "evaluator state 'last_eval_mark'")
        self._max_eval_return = as_float(state["max_eval_return"], "evaluator state 'max_eval_return'")
        best = state.get("best")  # absent in checkpoints of earlier versions
        self._best = None if best is None else BestEvaluation.from_state(as_mapping(best, "evaluator state 'best'"))

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
