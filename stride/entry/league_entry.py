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

The league (players with their frozen weights, payoff, ratings, the opponents of the running
episodes) is in every checkpoint beside the replay buffer and the envs' in-flight episodes, so
``resume=`` continues the run exactly. Built from the serial pipeline's public pieces
(``load_cfg``, ``resumed_limits``, ``finished_policy``, ``random_collect``, ``finish_run``); only
the loop differs (no serial evaluator: the league's evaluation plays both seats, which a
fixed-seat evaluator cannot; :mod:`.league_eval`, shared with the Ray run).

``workers=N > 1`` (``stride -m league --workers N``) runs the same league with N collector actors
on Ray (:mod:`stride.entry.parallel.league`): the league stays in this process, the collectors play
the matches it draws and return the games.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, Optional

import torch

from ..config import Config, save_config
from ..config.compile import make_exp_dir
from ..data import create_buffer
from ..league import League, policy_opponent
from ..policy.base_policy import Policy
from ..utils.errors import ConfigError
from ..utils.log import build_tb_writer
from ..utils.narrow import as_number
from ..utils.registry import import_components
from ..utils.seed import set_pkg_seed
from ..worker import BaseLearner, create_collector
from .league_eval import LeagueEvaluation, league_table
from .progress import ProgressBar
from .run_state import write_limits
from .serial_entry import finish_run, finished_policy, load_cfg, random_collect, resumed_limits
from .utils import ConfigInput, Interrupt, build_env_manager, build_policy, check_spaces


def league_pipeline(
    input_cfg: Optional[ConfigInput],
    seed: int = 0,
    max_env_step: Optional[int] = None,
    model: Optional[torch.nn.Module] = None,
    exp_name: Optional[str] = None,
    resume: Optional[str] = None,
    progress: bool = True,
    workers: int = 1,
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
    """
    if workers < 1:
        raise ConfigError(f"workers={workers}: valid choices: a whole number >= 1 (1: serial, N > 1: N collectors on Ray)")
    import_components()
    cfg, resume_ckpt = load_cfg(input_cfg, seed, exp_name, resume)
    _check(cfg)
    if resume_ckpt is not None:
        limits = resumed_limits(cfg.exp_name, max_env_step, None)
        if isinstance(limits, dict):
            return finished_policy(cfg, model, resume_ckpt, limits)
        max_env_step = limits[0]
        workers = workers if workers > 1 else _ray_workers(cfg.exp_name)
    if workers > 1:
        if model is not None:
            raise ConfigError("league_pipeline(workers > 1) builds its models in the Ray actors from the config; "
                              "valid choices: model=None, or workers=1 with a model")
        return _league_on_ray(cfg, resume_ckpt, workers, max_env_step, progress)
    torch.set_num_threads(int(cfg.get("num_threads", 1)))
    set_pkg_seed(cfg.seed, use_cuda=cfg.policy.cuda)
    policy = build_policy(cfg, model)
    league = League(cfg.league, make_actor=lambda weights: policy_opponent(policy.league_mode.frozen(weights)))
    collector_env = build_env_manager(cfg, cfg.seed, env_objects={"matchmaker": league})
    check_spaces(cfg, collector_env)
    if resume_ckpt is None:
        cfg.exp_name = make_exp_dir(cfg.exp_name)
        save_config(cfg, cfg.exp_name)
        write_limits(cfg.exp_name, max_env_step, None)
    exp: str = cfg.exp_name
    tb = build_tb_writer(exp)
    try:
        learner = BaseLearner(cfg.policy.learn.learner, policy.learn_mode, tb, exp)
        collector = create_collector(cfg.policy.collect.collector, collector_env, policy.collect_mode,
                                     tb_logger=tb, exp_name=exp)
        buffer = create_buffer(cfg.policy.other.replay_buffer, seed=cfg.seed, tb_logger=tb, exp_name=exp)
        evaluation = LeagueEvaluation(cfg, exp, tb)
        # the league first: loading the collector replays the envs' running episodes against it
        for name, comp in (("league", league), ("collector", collector), ("buffer", buffer),
                           ("league_evaluation", evaluation)):
            learner.register_state(name, comp)
        learner.call_hook("before_run")
        if resume_ckpt is not None:
            learner.load_checkpoint(resume_ckpt)
            collector.envstep = learner.envstep
        result = _run(cfg, policy, league, learner, collector, buffer, evaluation, max_env_step, progress)
        learner.call_hook("after_run")  # the last checkpoint: the true training state (what resume continues)
        best = result.pop("best_snapshot", None)
        if best is not None and not result["stop"] and not result["interrupted"] and cfg.league.return_best:
            weights = league.players[best].weights if best in league.players else None
            if weights is not None:  # a snapshot the league dropped (max_historical) cannot come back
                policy.league_mode.load_snapshot(weights)
                result["returned_snapshot"] = best
    finally:
        collector_env.close()
        if tb is not None:
            tb.close()
    return finish_run(policy, result, learner, exp, max_env_step, None)


def _ray_workers(exp_dir: str) -> int:
    """The collector actors a run in ``exp_dir`` had (its ``system_config.json``); 1: a serial run."""
    path = os.path.join(exp_dir, "system_config.json")
    if not os.path.isfile(path):
        return 1
    with open(path) as f:
        return int(as_number(json.load(f).get("collector_num", 1), "system_config.json collector_num"))


def _league_on_ray(cfg: Config, resume_ckpt: Optional[str], workers: int, max_env_step: Optional[int],
                   progress: bool) -> Policy:
    """The league run with ``workers`` collector actors: checked here as the serial one, run by
    :func:`stride.entry.parallel.league.league_on_ray`."""
    from .parallel.league import league_on_ray

    import_components()
    league = League(cfg.league)  # the collectors play the historical players; the driver only keeps them
    probe = build_env_manager(cfg, cfg.seed, env_objects={"matchmaker": league})
    try:
        check_spaces(cfg, probe)
    finally:
        probe.close()
    if resume_ckpt is None:
        cfg.exp_name = make_exp_dir(cfg.exp_name)
        save_config(cfg, cfg.exp_name)
        write_limits(cfg.exp_name, max_env_step, None)
    return league_on_ray(cfg, league, resume_ckpt, workers, max_env_step, progress)


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


def _run(cfg: Config, policy: Policy, league: League, learner: BaseLearner, collector: Any, buffer: Any,
         evaluation: "LeagueEvaluation", max_env_step: Optional[int], progress: bool) -> Dict[str, Any]:
    """The loop: collect (the league matches each episode), learn, snapshot + evaluate when due."""
    env_step_limit = math.inf if max_env_step is None else max_env_step
    learn = cfg.policy.learn
    use_priority = bool(cfg.policy.priority)
    bar = ProgressBar(enabled=progress, total=env_step_limit, initial=collector.envstep)
    stop, interrupted = False, False
    if cfg.policy.random_collect_size > 0 and buffer.count() == 0 and learner.train_iter == 0:
        random_collect(cfg, policy, collector, buffer)
    with Interrupt() as interrupt:
        while True:
            if interrupt.requested:
                interrupted = True
                learner.save_checkpoint()
                break
            kwargs = policy.collect_mode.collect_kwargs(collector.envstep, learner.train_iter)
            new_data = collector.collect(train_iter=learner.train_iter, policy_kwargs=kwargs)
            buffer.push(new_data, cur_collector_envstep=collector.envstep)
            for _ in range(learn.update_per_collect):
                batch = buffer.sample_batch(learn.batch_size, learner.train_iter)
                if batch is None:
                    break
                learner.train(batch, collector.envstep)
                if use_priority:
                    buffer.update(learner.priority_info)
            if league.should_snapshot(learner.train_iter):
                player = league.snapshot(policy.league_mode.snapshot(), learner.train_iter)
                stop, row = evaluation.evaluate(policy, league, player.player_id, learner.train_iter, collector.envstep)
                learner.logger.info(league_table(league, row))
                if stop:
                    learner.save_checkpoint()
                    break
            bar.update(collector.envstep, learner.train_iter, evaluation.last_return)
            if collector.envstep >= env_step_limit:
                break
    bar.close()
    return {"stop": bool(stop), "interrupted": interrupted, "signal": interrupt.signal_name,
            "env_step": collector.envstep, "train_iter": learner.train_iter, "snapshots": len(league.historical()),
            **evaluation.summary(), "exp_dir": cfg.exp_name}
