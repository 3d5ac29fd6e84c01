"""``league_pipeline``: self-play on a two-player PettingZoo game with a league of opponents.

The serial off-policy loop (collect -> replay -> learn), whose collector's envs draw each episode's
opponent and seat from a :class:`stride.league.League` (their ``matchmaker``): a frozen snapshot
of the main player, a fixed opponent (``random``, ``win_block``) or none (self-play, both seats
learn). After each snapshot (the league's rule) the main player plays ``league.eval_episode``
fresh games against each ``league.eval_opponents`` in every seat; the row -- snapshot, the main
player's TrueSkill rating (mu, sigma), games, won / drawn / lost per opponent and seat, win rates,
train CPU-seconds -- goes to ``<exp>/league.csv``, TensorBoard (``league/...``) and the log, and
the run stops once that evaluation meets ``league.stop_max_loss_rate`` / ``league.stop_win_rate``
(or at ``max_env_step``).

With ``league.main_exploiter.use`` a second learner, :class:`stride.league.MainExploiter` (its own policy,
collector, envs and replay buffer, built from the same config), plays the main player's newest
snapshot in every episode, one collect and ``update_per_collect`` updates per loop beside the
main player's; at its snapshot rule its weights join the league and it is reset to its initial
learn state with an empty buffer. It starts once the main player has a first snapshot.

The league (players with their frozen weights, payoff, ratings, the opponents of the running
episodes) is in every checkpoint beside the replay buffer and the envs' in-flight episodes, so
``resume=`` continues the run exactly. Built on the run core (:class:`~stride.entry.run.Run`: folder,
limits, seeding, TensorBoard, checkpoint components, signals, callbacks, ``result.json``) and the
serial pipeline's public pieces (``load_cfg``, ``finished_policy``, ``WarmUp``); only the loop differs (no serial evaluator: the league's evaluation plays both seats, which a
fixed-seat evaluator cannot; :mod:`.league_eval`, shared with the Ray run).

``workers=N > 1`` (``stride -m league --workers N``) runs the same league with N collector actors
on Ray (:mod:`stride.entry.parallel.league`): the league stays in this process, the collectors play
the matches it draws and return the games.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Dict, Optional, Sequence

import torch

from ..config import Config
from ..data import create_buffer
from ..league import League, MainExploiter, frozen, load_snapshot, policy_opponent, snapshot
from ..league.league import MAIN
from ..policy.base_policy import Policy
from ..utils.errors import ConfigError
from ..utils.registry import import_components
from ..worker import BaseLearner, create_collector
from .league_eval import LeagueEvaluation, league_table
from .run import Callback, Run
from .run_state import LEAGUE, run_mode, write_workers
from .serial_entry import WarmUp, finished_policy, load_cfg
from .utils import ConfigInput, build_env_manager, build_policy, check_spaces, probe_spaces, sample_transforms


def league_pipeline(
    input_cfg: Optional[ConfigInput],
    seed: int = 0,
    max_env_step: Optional[int] = None,
    model: Optional[torch.nn.Module] = None,
    exp_name: Optional[str] = None,
    resume: Optional[str] = None,
    progress: bool = True,
    workers: int = 1,
    callbacks: Optional[Sequence[Callback]] = None,
) -> Policy:
    """Train the main player of a self-play league; returns its policy (``eval_mode.forward``
    takes PettingZoo's per-agent observation keyed by env id), the run's summary in ``policy.result``.

    Args:
        input_cfg: ``[main_config, create_config]`` (with a ``league`` section; create_config
            ``league=dict(type='one_vs_one')``) or the path of a config ``.py`` file.
        seed: seeds every RNG.
        max_env_step: stop after this many env steps of the main player (a resumed run keeps its limit).
        model / exp_name / resume / progress: as :func:`stride.entry.serial_pipeline`.
        workers: collectors; > 1: that many collector actors on a local Ray instance with the
            league in this process (:mod:`stride.entry.parallel.league`; needs ``stride-rl[dist]``).
            A resumed Ray run keeps its number unless given.
        callbacks: as :func:`stride.entry.serial_pipeline` (``on_eval`` gets each snapshot's
            ``league.csv`` row); in the serial league only (``workers=1``) for now.
    """
    if workers < 1:
        raise ConfigError(f"workers={workers}: valid choices: a whole number >= 1 (1: serial, N > 1: N collectors on Ray)")
    import_components()
    cfg, resume_ckpt = load_cfg(input_cfg, seed, exp_name, resume, mode=LEAGUE)
    _check(cfg)
    with Run(cfg, LEAGUE, max_env_step=max_env_step, resume_ckpt=resume_ckpt, progress=progress,
             callbacks=callbacks, workers=workers) as run:
        done = run.already_finished()
        if resume_ckpt is not None and done is not None:
            return finished_policy(cfg, model, resume_ckpt, done)
        recorded = workers if resume_ckpt is None else run_mode(cfg.exp_name)[1]  # the collector actors run.json records
        run.workers = workers if workers > 1 else recorded  # a resumed run on Ray keeps its number
        if run.workers > 1:
            _check_ray(cfg, model, callbacks)
        if run.workers != recorded:  # resumed with another --workers: the next resume keeps it
            write_workers(cfg.exp_name, run.workers)
        return _league_on_ray(run) if run.workers > 1 else _league(run, model)


def _league(run: Run, model: Optional[torch.nn.Module]) -> Policy:
    """The serial league run."""
    cfg = run.cfg
    # the historical players are the policy's frozen copies: made when first played, after the policy is built
    league = League(cfg.league, make_actor=lambda weights: policy_opponent(frozen(policy, weights)))
    collector_env = build_env_manager(cfg, cfg.seed, env_objects={"matchmaker": league})
    check_spaces(cfg, collector_env)  # before the policy: it takes what it needs of the env's spaces
    policy = build_policy(cfg, model)
    run.open()
    exp: str = cfg.exp_name
    tb = run.tb
    exploiter: Optional[MainExploiter] = None
    try:
        learner = BaseLearner(cfg.policy.learn.learner, policy.learn_mode, tb, exp)
        collector = create_collector(cfg.policy.collect.collector, collector_env, policy.collect_mode,
                                     tb_logger=tb, exp_name=exp, sample_transforms=sample_transforms(cfg))
        buffer = create_buffer(cfg.policy.other.replay_buffer, seed=cfg.seed, tb_logger=tb, exp_name=exp)
        evaluation = LeagueEvaluation(cfg, exp, tb)
        if cfg.league.main_exploiter.use:
            exploiter = main_exploiter(cfg, league)
        # the league first: loading the collector replays the envs' running episodes against it
        for name, comp in (("league", league), ("collector", collector), ("buffer", buffer),
                           ("league_evaluation", evaluation), ("main_exploiter", exploiter)):
            run.register_state(name, comp)
        run.start(learner)
        if run.resume_ckpt is not None:
            collector.envstep = learner.envstep
        result = _run(cfg, policy, league, learner, collector, buffer, evaluation, run, exploiter)
        learner.call_hook("after_run")  # the last checkpoint: the true training state (what resume continues)
        best = result.pop("best_snapshot", None)
        if best is not None and not result["stop"] and not result["interrupted"] and cfg.league.return_best:
            weights = league.players[best].weights if best in league.players else None
            if weights is not None:  # a snapshot the league dropped (max_historical) cannot come back
                load_snapshot(policy, weights)
                result["returned_snapshot"] = best
    finally:
        collector_env.close()
        if exploiter is not None:
            exploiter.close()
    policy.result = run.finish(result, learner.train_iter)
    return policy


def _check_ray(cfg: Config, model: Optional[torch.nn.Module], callbacks: Optional[Sequence[Callback]]) -> None:
    """What a league on Ray refuses (before anything is written)."""
    if model is not None:
        raise ConfigError("league_pipeline(workers > 1) builds its models in the Ray actors from the config; "
                          "valid choices: model=None, or workers=1 with a model")
    if cfg.league.main_exploiter.use:
        raise ConfigError("league.main_exploiter.use=True runs in the serial league only; valid choices: "
                          "workers=1 with the exploiter, or league.main_exploiter.use=False on Ray")
    if callbacks:
        raise ConfigError("league_pipeline(workers > 1) takes no callbacks yet; valid choices: callbacks=None, "
                          "or workers=1 with callbacks")


def _league_on_ray(run: Run) -> Policy:
    """The league run with ``run.workers`` collector actors: checked here as the serial one, run by
    :func:`stride.entry.parallel.league.league_on_ray`."""
    from .parallel.league import league_on_ray

    cfg = run.cfg
    league = League(cfg.league)  # the collectors play the historical players; the driver only keeps them
    probe_spaces(cfg, env_objects={"matchmaker": league})
    return league_on_ray(run, league)  # opens the run's folder once Ray started


def _check(cfg: Config) -> None:
    if cfg.get("league") is None:
        raise ConfigError("the league pipeline needs a league section: create_config league=dict(type='one_vs_one')")
    if cfg.env.type != "pettingzoo":
        raise ConfigError(f"the league pipeline plays PettingZoo games (env.type='pettingzoo'), got env.type={cfg.env.type!r}")
    if cfg.env.get("opponent") is not None:
        raise ConfigError(f"env.opponent={cfg.env.opponent!r}: in a league the league picks the opponents "
                          "(league.fixed_opponents); set env.opponent=None")
    if cfg.env.manager.type != "base":
        raise ConfigError(f"the league pipeline needs env.manager.type='base' (its envs ask the league in this "
                          f"process for their opponents), got {cfg.env.manager.type!r}")
    if cfg.policy.on_policy:
        raise ConfigError(f"the league pipeline trains off-policy learners (a replay buffer); policy "
                          f"'{cfg.policy.type}' is on-policy")


def main_exploiter(cfg: Config, league: League) -> MainExploiter:
    """The league's main exploiter (:class:`stride.league.MainExploiter`) with its parts built from
    the run's config: a policy, a collector over ``env.collector_env_num`` envs whose matchmaker is
    ``league.exploiter_matches()``, and a replay buffer."""
    policy = build_policy(cfg)
    # its own episode seeds (the league keeps the exploiter's running episodes apart from the main player's)
    env = build_env_manager(cfg, int(cfg.seed) + 7_919, env_objects={"matchmaker": league.exploiter_matches()})
    collector = create_collector(cfg.policy.collect.collector, env, policy.collect_mode,
                                 instance_name="exploiter_collector", sample_transforms=sample_transforms(cfg))
    buffer = create_buffer(cfg.policy.other.replay_buffer, seed=int(cfg.seed) + 7_919)
    learn = cfg.policy.learn
    return MainExploiter(league, policy, collector, buffer, learn.update_per_collect, learn.batch_size)


def _run(cfg: Config, policy: Policy, league: League, learner: BaseLearner, collector: Any, buffer: Any,
         evaluation: "LeagueEvaluation", run: Run, exploiter: Optional[MainExploiter] = None) -> Dict[str, Any]:
    """The loop: collect (the league matches each episode), learn, snapshot + evaluate when due."""
    env_step_limit = math.inf if run.max_env_step is None else run.max_env_step
    learn = cfg.policy.learn
    use_priority = bool(cfg.policy.priority)
    bar = run.bar(total=env_step_limit, initial=collector.envstep)
    stop = False
    warm = WarmUp(cfg, policy, collector, buffer, learner)
    with run.signals():  # from here a signal stops the run at the next collect, warm-up included
        note = warm.note(run.max_env_step)
        if note is not None:
            print(note, file=sys.stderr, flush=True)
        while True:
            if run.stop_requested:
                run.halt(learner.save_checkpoint)
                break
            if warm.pending():  # the random warm-up, one collect a loop (the serial loop's)
                warm.collect()
                run.collected(collector.envstep, learner.train_iter)
                bar.update(collector.envstep, learner.train_iter, evaluation.last_return)
                if collector.envstep >= env_step_limit:
                    break
                continue
            kwargs = policy.collect_mode.collect_kwargs(collector.envstep, learner.train_iter)
            new_data = collector.collect(train_iter=learner.train_iter, policy_kwargs=kwargs)
            run.collected(collector.envstep, learner.train_iter)
            buffer.push(new_data, cur_collector_envstep=collector.envstep)
            for _ in range(learn.update_per_collect):
                sampled = buffer.sample_batch(learn.batch_size, learner.train_iter)
                if sampled is None:
                    break
                batch, ticket = sampled
                log = learner.train(batch, collector.envstep)
                if use_priority:
                    buffer.update(ticket, learner.priority)
                run.trained(learner.train_iter, log)
            if league.should_snapshot(learner.train_iter):
                player = league.snapshot(snapshot(policy), learner.train_iter)
                stop, row = evaluation.evaluate(policy, league, player.player_id, learner.train_iter, collector.envstep)
                learner.logger.info(league_table(league, row))
                run.evaluated(dict(row, stop=bool(stop)))
                if stop:
                    learner.save_checkpoint()
                    break
            if exploiter is not None and league.exploiter_target() is not None:
                taken = exploiter.step()
                if taken is not None:
                    learner.logger.info(f"[league] exploiter snapshot {taken} (then reset) at main train_iter="
                                        f"{learner.train_iter}")
            bar.update(collector.envstep, learner.train_iter, evaluation.last_return)
            if collector.envstep >= env_step_limit:
                break
    bar.close()
    return {"stop": bool(stop), **run.outcome(),
            "env_step": collector.envstep, "train_iter": learner.train_iter, "snapshots": sum(league.players[p].parent_id == MAIN for p in league.historical()),
            **({} if exploiter is None else {"exploiter_env_step": exploiter.envstep,
                                              "exploiter_train_iter": exploiter.train_iter,
                                              "exploiter_snapshots": exploiter.resets}),
            **evaluation.summary(), "exp_dir": cfg.exp_name}
