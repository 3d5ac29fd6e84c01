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

from ...config import Config
from ...league import League, load_snapshot
from ...policy.base_policy import Policy
from ...utils.errors import StrideError
from ...utils.files import atomic_write_json
from ...utils.log import build_logger
from ...utils.narrow import as_list, as_mapping
from ...worker.learner.learner import read_checkpoint
from ..league_eval import LeagueEvaluation, league_table
from ..run import Run
from ..utils import build_policy
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
    """The coordinator with the league: records the games each batch brings, snapshots, evaluates.
    The league and its evaluation are the run's checkpoint components (a resumed run's go on)."""

    def __init__(self, cfg: Config, sys_cfg: Config, run: Run, league: League, evaluation: LeagueEvaluation) -> None:
        super().__init__(cfg, sys_cfg, run)
        self.the_league, self.evaluation = league, evaluation
        run.register_state("league", league)  # its snapshots and payoff
        run.register_state("league_evaluation", evaluation)  # its best and clocks
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

    def run_league(self, policy: Policy) -> Dict[str, object]:
        """Collect, record games, learn, snapshot and evaluate until the stop rule, the env-step
        limit, a signal or a callback; the actors' CPU counts as training in the evaluation's clock."""
        import ray

        run, league, evaluation = self.core, self.the_league, self.evaluation
        env_limit = math.inf if run.max_env_step is None else run.max_env_step
        self.begin()
        bar = run.bar(env_limit, initial=self.envstep)
        stop = False
        self.publish()
        self.start()
        with run.signals():
            while not run.stop_requested:
                if self.next_batch(None) is None:
                    continue
                run.collected(self.envstep, self.train_iter)
                if league.should_snapshot(self.train_iter):
                    player = league.snapshot(ray.get(self.learner.league_snapshot.remote()), self.train_iter)
                    policy.eval_mode.load_state_dict(ray.get(self.learner.eval_state.remote()))
                    evaluation.clock.add_cpu(self.actor_cpu())
                    stop, row = evaluation.evaluate(policy, league, player.player_id, self.train_iter, self.envstep)
                    self._league_log.info(league_table(league, row))
                    run.evaluated(dict(row, stop=bool(stop)))
                    self.publish()
                    if stop:
                        break
                bar.update(self.envstep, self.train_iter, evaluation.last_return)
                if self.envstep >= env_limit:
                    break
            bar.close()
            self.publish()  # the league as it ends goes into the last checkpoint
            evaluation.clock.add_cpu(self.actor_cpu())
            if run.stop_requested:
                run.halt(self.save_checkpoint)
            elif stop:
                self.save_checkpoint()
        summary = self.summary(policy)  # the learner's final checkpoint (after_run)
        return {"stop": bool(stop), **run.outcome(), "env_step": self.envstep, "train_iter": self.train_iter,
                "exp_dir": run.exp, "snapshots": len(league.historical()), "games_recorded": self.games_recorded,
                **evaluation.summary(), **summary, "workers": len(self.collectors)}


def league_on_ray(run: Run, league: League) -> Policy:
    """``league_pipeline``'s run (``run``: its config checked by the caller) with ``run.workers``
    collector actors on a local Ray instance; returns the main player's policy."""
    require_ray()
    cfg, workers = run.cfg, run.workers
    sys_cfg = league_system_config(workers)
    if cpus_needed(sys_cfg) > float(sys_cfg.num_cpus or os.cpu_count() or 1):
        raise StrideError(f"--workers {workers}: more collectors than this machine's CPUs can host")
    if run.resume_ckpt is not None:  # the run's components load the league and the evaluation from it
        components = as_mapping(read_checkpoint(run.resume_ckpt).get("components", {}), "checkpoint 'components'")
        if "league" not in components:
            raise StrideError(f"checkpoint {run.resume_ckpt} holds no league: it is not a league run's")
    policy = build_policy(cfg, enable_field=["learn", "eval"])
    with local_ray(sys_cfg.num_cpus) as info:  # first: a Ray that does not start leaves no experiment folder
        from ray.exceptions import RayError

        run.open()
        exp: str = cfg.exp_name
        atomic_write_json(os.path.join(exp, "system_config.json"), dict(sys_cfg))  # a resume's --workers too
        coordinator = LeagueCoordinator(cfg, sys_cfg, run, league, LeagueEvaluation(cfg, exp, run.tb))
        try:
            result = coordinator.run_league(policy)
        except RayError as e:  # the learner (its state is the run) or Ray itself failed
            reason = " ".join(str(e).split())[:400]
            raise StrideError(f"the league run stopped: {type(e).__name__}: {reason}; "
                              f"{latest_checkpoint(exp)}") from None
        finally:
            coordinator.close()
        result["ray_start_seconds"] = round(float(info["start_seconds"]), 3)  # type: ignore[arg-type]
    best = result.pop("best_snapshot", None)
    if best is not None and not result["stop"] and not result["interrupted"] and cfg.league.return_best:
        weights = league.players[best].weights if best in league.players else None
        if weights is not None:  # a snapshot the league dropped (max_historical) cannot come back
            load_snapshot(policy, weights)
            result["returned_snapshot"] = best
    policy.result = run.finish(result, coordinator.train_iter)
    return policy
