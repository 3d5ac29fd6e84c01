"""The self-play league on Ray: ``stride -m league -c cfg.py --workers N`` (``league_pipeline(workers=N)``).

    collector actors (N) ──(meta + games, samples)──► coordinator (the league) ──► replay ──► learner
          ▲  weights (per update), league state (when it changed)   │  snapshots, evaluation
          └─────────────────────────────────────────────────────────┘

The parallel pipeline's :class:`~.pipeline.Coordinator` unchanged (collector, replay and learner
actors, weight broadcast, a dead collector replaced), with the league where the serial pipeline
has it, in one process (the driver): each collector's envs draw their matches from a
:class:`~stride.league.LeagueReplica` that follows the driver's league and plays the frozen
opponents with the weights it holds; each collect brings back the games it finished, which the
driver records (:meth:`League.add_game`: payoff, TrueSkill ratings, counts). After each batch
the driver asks the league's snapshot rule, freezes the learner's weights into a historical
player, runs the serial pipeline's :class:`~stride.entry.league_eval.LeagueEvaluation` (same
``league.csv``, same stop rule, same ``return_best``) and publishes the new league.

The league state goes to the collectors (and into the learner's checkpoints) at every snapshot and
every :data:`PUBLISH_EVERY` batches, each collector receiving a state once: between publications a
collector matches with a payoff up to that many batches old (the serial league's is current), as
its weights are one update old. Checkpoints carry the league and the evaluation's best beside the
learner's state, so ``resume=`` continues with every snapshot and the payoff table; the replay
comes back from its own snapshot file and the collectors start fresh episodes (the serial
pipeline's resume is exact; this one, as any asynchronous run, is not).
"""

from __future__ import annotations

import math
import os
from typing import Dict, Mapping, Optional

import torch

from ...config import Config
from ...config.compile import keep_exp_dirs
from ...league import League
from ...policy.base_policy import Policy
from ...utils.errors import StrideError
from ...utils.files import atomic_write_json
from ...utils.log import build_logger, build_tb_writer
from ...utils.narrow import as_list, as_mapping
from ...utils.seed import set_pkg_seed
from ...worker.learner.learner import read_checkpoint
from ..league_eval import LeagueEvaluation, league_table
from ..progress import ProgressBar
from ..run_state import RESULT_FILE
from ..utils import Interrupt, build_policy
from .cluster import local_ray, require_ray
from .pipeline import Coordinator, latest_checkpoint
from .system import compile_system_config, cpus_needed

#: batches between two publications of the league state to the collectors (and the checkpoints)
PUBLISH_EVERY = 25
#: what the learner actor asks of Ray; each collector gets an equal share of the rest (at most 0.5)
LEARNER_CPUS = 0.5


def league_system_config(workers: int, num_cpus: Optional[int] = None) -> Config:
    """``workers`` collector actors, one learner and the replay on a local instance of ``num_cpus``
    (default: the machine's) CPUs, the collectors sharing what the learner leaves."""
    cpus = num_cpus or os.cpu_count() or 1
    share = min(0.5, max(cpus - LEARNER_CPUS, 0.0) / workers)
    return compile_system_config(dict(collector_num=workers, collector_cpus=share, learner_cpus=LEARNER_CPUS,
                                      num_cpus=num_cpus))


class LeagueCoordinator(Coordinator):
    """The coordinator with the league: records the games each batch brings, snapshots, evaluates."""

    def __init__(self, cfg: Config, sys_cfg: Config, league: League, evaluation: LeagueEvaluation,
                 resume_ckpt: Optional[str] = None) -> None:
        super().__init__(cfg, sys_cfg, evaluation.tb, resume_ckpt=resume_ckpt)
        self.the_league, self.evaluation = league, evaluation
        self.register_state("league", league)  # a resumed run's snapshots and payoff
        self.register_state("league_evaluation", evaluation)  # its best and clocks
        self.games_recorded = 0
        self._batches_since_publish = 0
        self._league_log = build_logger(cfg.exp_name, "league")

    def received(self, meta: Mapping[str, object]) -> None:
        for game in as_list(meta.get("games", []), "a batch's games"):
            self.the_league.add_game(None if game is None else [str(x) for x in as_list(game, "a game")])
            self.games_recorded += 1
        self._batches_since_publish += 1
        if self._batches_since_publish >= PUBLISH_EVERY:
            self.publish()

    def publish(self) -> None:
        """The league and the evaluation's best to the collectors and the learner's checkpoints."""
        self.learner.hold.remote("league_evaluation", self.evaluation.state_dict())
        self.publish_league(self.the_league.state_dict())
        self._batches_since_publish = 0

    def run_league(self, policy: Policy, max_env_step: Optional[int], progress: bool) -> Dict[str, object]:
        """Collect, record games, learn, snapshot and evaluate until the stop rule, the env-step
        limit or a signal; the driver's CPU less the evaluations' is added to the actors'."""
        import ray

        league, evaluation = self.the_league, self.evaluation
        env_limit = math.inf if max_env_step is None else max_env_step
        bar = ProgressBar(enabled=progress, total=env_limit, initial=self.envstep)
        stop, interrupted = False, False
        self.publish()
        self.start()
        with Interrupt() as interrupt:
            while True:
                if interrupt.requested:
                    interrupted = True
                    break
                if self.next_batch(None) is None:
                    continue
                if league.should_snapshot(self.train_iter):
                    player = league.snapshot(ray.get(self.learner.league_snapshot.remote()), self.train_iter)
                    policy.eval_mode.load_state_dict(ray.get(self.learner.eval_state.remote()))
                    evaluation.clock.add_cpu(self.actor_cpu())
                    stop, row = evaluation.evaluate(policy, league, player.player_id, self.train_iter, self.envstep)
                    self._league_log.info(league_table(league, row))
                    self.publish()
                    if stop:
                        break
                bar.update(self.envstep, self.train_iter, evaluation.last_return)
                if self.envstep >= env_limit:
                    break
        bar.close()
        self.publish()  # the league as it ends goes into the last checkpoint
        evaluation.clock.add_cpu(self.actor_cpu())
        if interrupted or stop:
            self.save_checkpoint()
        summary = self.summary(policy)  # the learner's final checkpoint (after_run)
        return {"stop": bool(stop), "interrupted": interrupted, "signal": interrupt.signal_name,
                "env_step": self.envstep, "train_iter": self.train_iter, "exp_dir": self.cfg.exp_name,
                "snapshots": len(league.historical()), "games_recorded": self.games_recorded,
                **evaluation.summary(), **summary, "workers": len(self.collectors)}


def league_on_ray(cfg: Config, league: League, resume_ckpt: Optional[str], workers: int,
                  max_env_step: Optional[int], progress: bool) -> Policy:
    """``league_pipeline``'s run with ``workers`` collector actors on a local Ray instance (the
    experiment folder made and the config checked by the caller); returns the main player's policy."""
    require_ray()
    sys_cfg = league_system_config(workers)
    if cpus_needed(sys_cfg) > float(sys_cfg.num_cpus or os.cpu_count() or 1):
        raise StrideError(f"--workers {workers}: more collectors than this machine's CPUs can host")
    exp: str = cfg.exp_name
    atomic_write_json(os.path.join(exp, "system_config.json"), dict(sys_cfg))
    torch.set_num_threads(int(cfg.get("num_threads", 1)))
    set_pkg_seed(cfg.seed, use_cuda=cfg.policy.cuda)
    policy = build_policy(cfg, enable_field=["learn", "eval"])
    tb = build_tb_writer(exp)
    evaluation = LeagueEvaluation(cfg, exp, tb)
    if resume_ckpt is not None:  # the coordinator loads the league and the evaluation from it (register_state)
        components = as_mapping(read_checkpoint(resume_ckpt).get("components", {}), "checkpoint 'components'")
        if "league" not in components:
            raise StrideError(f"checkpoint {resume_ckpt} holds no league: it is not a league run's")
    try:
        with local_ray(sys_cfg.num_cpus) as info:
            from ray.exceptions import RayError

            coordinator = LeagueCoordinator(cfg, sys_cfg, league, evaluation, resume_ckpt)
            keep_exp_dirs()  # Ray started and the roles are built: the folder is the run's from here on
            try:
                result = coordinator.run_league(policy, max_env_step, progress)
            except RayError as e:  # the learner (its state is the run) or Ray itself failed
                reason = " ".join(str(e).split())[:400]
                raise StrideError(f"the league run stopped: {type(e).__name__}: {reason}; "
                                  f"{latest_checkpoint(exp)}") from None
            finally:
                coordinator.close()
            result["ray_start_seconds"] = round(float(info["start_seconds"]), 3)  # type: ignore[arg-type]
    finally:
        if tb is not None:
            tb.close()
    best = result.pop("best_snapshot", None)
    if best is not None and not result["stop"] and not result["interrupted"] and cfg.league.return_best:
        weights = league.players[best].weights if best in league.players else None
        if weights is not None:  # a snapshot the league dropped (max_historical) cannot come back
            policy.league_mode.load_snapshot(weights)
            result["returned_snapshot"] = best
    result.update(max_env_step=max_env_step, max_train_iter=None)
    atomic_write_json(os.path.join(exp, RESULT_FILE), result)
    policy.result = result
    return policy
