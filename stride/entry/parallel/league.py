"""The self-play league on Ray: ``stride -m league -c cfg.py --workers N`` (``league_pipeline(workers=N)``).

    collector actors (N) ──(meta + games, samples)──► coordinator (the league) ──► replay ──► learner
          ▲  weights (per update), league state (when it changed)   │  snapshots, evaluation
          └─────────────────────────────────────────────────────────┘

The parallel pipeline's :class:`~.coordinator.Coordinator` unchanged (collector, replay and learner
actors, weight broadcast, a dead collector replaced), extended through its hook
(:class:`LeagueHook`, a :class:`~.coordinator.CoordinatorHook`: the generic coordinator and roles
know nothing of a league), with the league where the serial pipeline has it, in one process (the
driver): each collector's envs (:class:`LeagueCollectorRole`) draw their matches from a
:class:`~stride.league.LeagueReplica` that follows the driver's league and plays the frozen
opponents with the weights it holds; each collect brings back the games it finished, which the
driver records (:meth:`League.add_game`: payoff, TrueSkill ratings, counts). After each batch
the driver asks the league's snapshot rule, freezes the learner's weights into a historical
player, runs the serial pipeline's :class:`~stride.entry.league_eval.LeagueEvaluation` (same
``league.csv``, same stop rule, same ``return_best``) and publishes the new league.

The league state goes to the collectors (and into the learner's checkpoints) at every snapshot and
every :data:`PUBLISH_EVERY` batches, each collector receiving a state once: between publications a
collector matches with a payoff up to that many batches old (the serial league's is current), as
its weights are one update old. Checkpoints carry the league, the evaluation's best, the
coordinator's counters and the games recorded beside the learner's state, all taken at one moment
(Ctrl-C's checkpoint: the end; the learner's periodic ones: the last publication). What a resume
keeps exactly: every snapshot with its frozen weights, the payoff, ratings and game counts as the
checkpoint has them, every game a batch brought counted once (``games_recorded`` goes on from the
checkpoint's), and no counter going back; the replay comes back from its own snapshot file. What
it cannot keep (the serial league's resume is exact; this one, as any asynchronous run, is not):
the order in which batches arrive, the collects in flight at the interruption (nothing of them is
counted) and the collectors' unfinished episodes (their steps so far are stored, their games
never end): the resumed collectors start fresh episodes.
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from ...config import Config
from ...league import League, LeagueReplica, frozen, load_snapshot, policy_opponent, snapshot
from ...policy.base_policy import Policy
from ...utils.errors import ConfigError, StrideError
from ...utils.files import atomic_write_json
from ...utils.log import build_logger
from ...utils.narrow import as_int, as_list, as_mapping
from ...worker.learner.learner import read_checkpoint
from ..league_eval import LeagueEvaluation, league_table
from ..run import Run
from ..utils import build_policy
from .cluster import local_ray, require_ray
from .coordinator import Coordinator, CoordinatorHook, latest_checkpoint
from .roles import CollectorRole, LearnerRole
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


class LeagueCollectorRole(CollectorRole):
    """A collector playing the driver's league: its envs' matchmaker is a
    :class:`~stride.league.LeagueReplica` (the frozen opponents played with the weights it holds);
    ``collect`` takes the driver's league state with the weights and returns the games its episodes
    finished in ``meta['games']``."""

    def env_objects(self, cfg: Config) -> Dict[str, object]:
        """The league replica, as the envs' matchmaker."""
        if cfg.get("league") is None:
            raise ConfigError(f"{self.name} plays a league but its config has no league section")
        policy = self.policy
        self.replica = LeagueReplica(cfg.league, make_actor=lambda w: policy_opponent(frozen(policy, w)))
        return {"matchmaker": self.replica}

    def collect(self, weights: Optional[Mapping[str, object]], policy_iter: int, envstep: int, train_iter: int,
                league: Optional[Mapping[str, object]] = None, league_version: int = -1
                ) -> Tuple[Dict[str, object], Sequence[object]]:
        """:meth:`CollectorRole.collect`; ``league``: the driver's ``League.state_dict()`` (version
        ``league_version``) to match the episodes from from now on (None: keep the one it has)."""
        if league is not None:
            self.replica.sync(league_version, league)
        meta, data = super().collect(weights, policy_iter, envstep, train_iter)
        meta["games"] = [None if g is None else list(g) for g in self.replica.take_games()]  # [opponent, outcome]
        return meta, data


class LeagueLearnerRole(LearnerRole):
    """The learner, which also freezes the main player's weights for a snapshot."""

    def league_snapshot(self) -> Dict[str, object]:
        """The main player's frozen weights now (``stride.league.snapshot(policy)``)."""
        return snapshot(self.policy)


class LeagueHook(CoordinatorHook):
    """The league on the generic :class:`~.coordinator.Coordinator` (its hook): records the games
    each batch brings, sends the league state to the collectors, and drives the loop that
    snapshots and evaluates (:meth:`run`). The league and its evaluation are the run's checkpoint
    components (a resumed run's go on)."""

    collector_role = LeagueCollectorRole
    learner_role = LeagueLearnerRole

    def __init__(self, cfg: Config, sys_cfg: Config, run: Run, league: League, evaluation: LeagueEvaluation) -> None:
        self.the_league, self.evaluation = league, evaluation
        # the ref of the league's state_dict() the collectors match from, its version, and the
        # version each collector was sent (a state is sent once per collector)
        self._ref: Any = None
        self._version = 0
        self._sent: Dict[str, int] = {}
        self.games_recorded = 0
        self._batches_since_publish = 0
        self.coordinator = Coordinator(cfg, sys_cfg, run, hook=self)
        run.register_state("league", league)  # its snapshots and payoff
        run.register_state("league_evaluation", evaluation)  # its best and clocks
        run.register_state("league_games", self)  # games_recorded: a resumed run counts on from it
        self._league_log = build_logger(cfg.exp_name, "league")

    def state_dict(self) -> Dict[str, object]:
        """The games recorded so far (each batch's once), so a resumed run's count goes on."""
        return {"games_recorded": self.games_recorded}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self.games_recorded = as_int(state["games_recorded"], "league_games 'games_recorded'")

    def collect_args(self, name: str) -> Tuple[object, ...]:
        """The league state, when ``name`` has not had this version yet (else None), and its version."""
        if self._ref is not None and self._sent.get(name) != self._version:
            self._sent[name] = self._version
            return self._ref, self._version
        return None, self._version

    def on_batch(self, meta: Mapping[str, object]) -> None:
        """The batch's games recorded; every :data:`PUBLISH_EVERY` batches the league published."""
        for game in as_list(meta.get("games", []), "a batch's games"):
            self.the_league.add_game(None if game is None else [str(x) for x in as_list(game, "a game")])
            self.games_recorded += 1
        self._batches_since_publish += 1
        if self._batches_since_publish >= PUBLISH_EVERY:
            self.publish()

    def on_restart(self, name: str) -> None:
        """The new incarnation starts with the league of its config: it gets the state again."""
        self._sent.pop(name, None)

    def publish(self) -> None:
        """The league to the collectors (from their next collect on), and with every other
        component of the run (the evaluation's best, the coordinator's counters, the games
        recorded) to the learner's checkpoints, all as of now: a checkpoint the learner writes by
        itself (``save_ckpt_after_iter``) resumes with a league, counters and games that agree."""
        import ray

        learner = self.coordinator.learner
        self._version += 1
        self._ref = ray.put(dict(self.the_league.state_dict()))
        for name, component in self.coordinator.core.components.items():
            learner.hold.remote(name, self._ref if component is self.the_league else component.state_dict())
        self._batches_since_publish = 0

    def run(self, policy: Policy) -> Dict[str, object]:
        """Collect, record games, learn, snapshot and evaluate until the stop rule, the env-step
        limit, a signal or a callback; the actors' CPU counts as training in the evaluation's clock."""
        import ray

        co = self.coordinator
        run, league, evaluation = co.core, self.the_league, self.evaluation
        env_limit = math.inf if run.max_env_step is None else run.max_env_step
        co.begin()
        bar = run.bar(env_limit, initial=co.envstep)
        stop = False
        self.publish()
        co.start()
        with run.signals():
            while not run.stop_requested:
                if co.next_batch(None) is None:
                    continue
                run.collected(co.envstep, co.train_iter)
                if league.should_snapshot(co.train_iter):
                    player = league.snapshot(ray.get(co.learner.league_snapshot.remote()), co.train_iter)
                    policy.eval_mode.load_state_dict(ray.get(co.learner.eval_state.remote()))
                    evaluation.clock.add_cpu(co.actor_cpu())
                    stop, row = evaluation.evaluate(policy, league, player.player_id, co.train_iter, co.envstep)
                    self._league_log.info(league_table(league, row))
                    run.evaluated(dict(row, stop=bool(stop)))
                    self.publish()
                    if stop:
                        break
                bar.update(co.envstep, co.train_iter, evaluation.last_return)
                if co.envstep >= env_limit:
                    break
            bar.close()
            self.publish()  # the league as it ends goes into the last checkpoint
            evaluation.clock.add_cpu(co.actor_cpu())
            if run.stop_requested:
                run.halt(co.save_checkpoint)
            elif stop:
                co.save_checkpoint()
        summary = co.summary(policy)  # the learner's final checkpoint (after_run)
        return {"stop": bool(stop), **run.outcome(), "env_step": co.envstep, "train_iter": co.train_iter,
                "exp_dir": run.exp, "snapshots": len(league.historical()), "games_recorded": self.games_recorded,
                **evaluation.summary(), **summary, "workers": len(co.collectors)}


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
    with local_ray(sys_cfg.num_cpus, run_dir=cfg.exp_name) as info:  # first: a Ray that does not start leaves no experiment folder
        from ray.exceptions import RayError

        run.open()
        exp: str = cfg.exp_name
        atomic_write_json(os.path.join(exp, "system_config.json"), dict(sys_cfg))  # a resume's --workers too
        hook = LeagueHook(cfg, sys_cfg, run, league, LeagueEvaluation(cfg, exp, run.tb))
        coordinator = hook.coordinator
        try:
            result = hook.run(policy)
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
