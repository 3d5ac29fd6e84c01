"""``stride -m tune``: hyper-parameter search with Optuna over a policy's declared search space.

Each trial is one ordinary serial run (:func:`stride.entry.serial_pipeline`, its own experiment
folder under ``<out>/trials/``) of the config with the trial's values written in. The objective is
the one the benchmarks judge by: **train CPU-seconds to the config's confirmed stop value** (the
evaluator's screen plus its ``confirm_episode`` confirmation), minimised. A trial that has not
confirmed within ``trial_cpu_s`` train CPU-seconds (or ``max_env_step``) scores a fixed penalty,
``2 * trial_cpu_s``, so that every trial that got there ranks above every trial that did not.

- Sampler: TPE (multivariate), seeded; the config's own values are enqueued as the first trial, so
  the study starts from the known config and its best is never one the study did not compare with it
  (the declared space is widened to hold them where the config lies outside it:
  :func:`~.tune_space.around_config`).
- Pruner: median (Optuna's ``MedianPruner``) on the evaluation return. Optuna compares intermediate
  values in the study's direction (minimise), so the value reported after each evaluation is the
  *negated* 10-episode mean return; its step is the evaluation's index (the same env-step schedule
  in every trial of one config).
- Storage and resume, the best config and the trials' checkpoints: :mod:`.tune_study`; the search
  space around the config: :mod:`.tune_space`; this module runs the trials.

Better than rl-zoo3's ``--optimize`` on purpose: the objective is cost to a *confirmed* solve (rl-zoo3
optimises the last evaluation's mean return at a fixed budget, which rewards a lucky screen);
search spaces are declared by each policy next to its defaults and checked against its config
(rl-zoo3 keeps samplers in a separate file); the known config is always trial 0.
"""

from __future__ import annotations

import copy
import os
import statistics
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, TypedDict

from ..config.compile import compile_config, keep_exp_dirs, make_exp_dir, provisional_exp_dirs
from ..utils.errors import ConfigError, StrideError
from ..utils.extras import import_extra
from ..utils.narrow import as_float
from .run import StopRun
from .tune_space import around_config, config_values, policy_defaults, policy_search_space, suggest, with_values
from .tune_state import WorkerLock, mark_trial
from .tune_study import (PENALTY_FACTOR, StudySpec, check_study, default_db, finished_count, open_study, record_trial,
                         resume_study, retry_callback, trial_value, write_best)
from .utils import ConfigInput, ConfigPair, check_cuda, read_config

#: what ``from stride.entry.tune import ...`` has always offered
__all__ = ["tune_pipeline", "TuneResult", "optimize", "check_study", "PENALTY_FACTOR",
           "around_config", "config_values", "policy_defaults", "policy_search_space", "with_values"]


#: why a trial's evaluation callback stopped its run: over the CPU budget (the penalty), or pruned
OVER_BUDGET = "over the trial's train CPU budget"


def _pair(input_cfg: ConfigInput) -> ConfigPair:
    if isinstance(input_cfg, str):
        return read_config(input_cfg)
    if len(input_cfg) != 2:
        raise ConfigError(f"a config is [main_config, create_config], got {len(input_cfg)} parts")
    return input_cfg[0], input_cfg[1]


class TuneResult(TypedDict):
    """What :func:`tune_pipeline` returns."""

    best_config: str  # the path of best_config.py
    best_command: str  # the command that trains it: stride -m serial -c <best_config.py> -s <seed>
    best_value: float  # the best trial's value: train CPU-seconds to the confirmed stop value, or the penalty
    best_params: Dict[str, object]  # its searched values, as config values
    best_trial: int  # its number
    best_reached: bool  # whether it confirmed the stop value
    n_finished: int  # finished (complete or pruned) trials in the study
    study_name: str
    storage: str
    out_dir: str
    penalty: float  # what a trial that did not confirm scores


@provisional_exp_dirs()  # a study that could not start (Ray did not) leaves no new folder
def tune_pipeline(
    input_cfg: ConfigInput,
    trials: int,
    seed: int = 0,
    storage: Optional[str] = None,
    study_name: Optional[str] = None,
    out_dir: Optional[str] = None,
    trial_cpu_s: float = 60.0,
    max_env_step: Optional[int] = None,
    heartbeat_s: int = 10,
    trial_seeds: int = 1,
    workers: int = 1,
    address: Optional[str] = None,
    keep_checkpoints: bool = False,
) -> TuneResult:
    """Search the policy's hyper-parameters until the study holds ``trials`` finished trials.

    Args:
        input_cfg: ``[main_config, create_config]`` or a config file (the values not searched).
        trials: finished (complete or pruned) trials the study should hold; a resumed study runs
            only the missing ones.
        seed: the sampler's seed and every trial's first run seed.
        storage: an Optuna storage URL (default ``sqlite:///<out_dir>/study.db``).
        study_name: default: the config's ``exp_name``.
        out_dir: trials' experiment folders and ``best_config.py`` (default ``<exp_name>_tune``).
        trial_cpu_s: a trial's train CPU-seconds budget; over it the trial scores the penalty.
        max_env_step: a trial's env-step budget (default none: the CPU budget alone).
        heartbeat_s: how often a running trial tells the storage it is alive.
        trial_seeds: runs per trial, seeds ``seed .. seed + trial_seeds - 1``; the trial's value is
            their median (one seed rewards configs that suit that seed); only the first run is pruned.
        workers: trials run at once, each worker a Ray task on one CPU sharing the study through its
            storage (Optuna's own distributed mode; its sampler seeded ``seed + worker``). Workers
            finish the trial they are in when the study is full, so a study may end up to
            ``workers - 1`` trials over ``trials``. 1 (default): in this process, no Ray.
        address: with ``workers > 1``, the ``HOST:PORT`` of a running Ray cluster to run them on
            (its storage must then be a database server every node reaches, not SQLite); default: a
            local instance on 127.0.0.1 for the search's duration.
        keep_checkpoints: every trial keeps its checkpoints (default: only the best trial's).

    Returns: a summary (:class:`TuneResult`).
    """
    _check_arguments(trials, trial_seeds, trial_cpu_s, workers, address, storage)
    import_extra("optuna", "tune", "stride -m tune's studies")  # one line naming the extra when Optuna is missing
    main, create = _pair(input_cfg)
    spec, defaults = _study_spec(main, create, seed=seed, storage=storage, study_name=study_name, out_dir=out_dir,
                                 trials=trials, trial_cpu_s=trial_cpu_s, max_env_step=max_env_step,
                                 heartbeat_s=heartbeat_s, trial_seeds=trial_seeds, on_cluster=address is not None,
                                 keep_checkpoints=keep_checkpoints)
    if storage is not None or os.path.isfile(default_db(spec.out_dir)):  # (a new default study: nothing to check)
        check_study(spec, defaults)  # before the folder is made and any trial runs
    make_exp_dir(spec.out_dir, renew=False)  # the same folder resumes the study
    study = resume_study(spec, defaults)
    if trials - finished_count(study) > 0:
        if workers == 1:
            keep_exp_dirs()  # the study starts: its folder stays
            optimize(spec, worker=0)
        else:
            _optimize_on_ray(spec, workers, address)
    return _summary(spec)


def _check_arguments(trials: int, trial_seeds: int, trial_cpu_s: float, workers: int, address: Optional[str],
                     storage: Optional[str]) -> None:
    """Refuse, in one line, a count or budget out of range and an ``address`` without what it needs."""
    if trials < 1:
        raise ConfigError(f"--trials must be >= 1, got {trials}")
    if trial_seeds < 1:
        raise ConfigError(f"trial_seeds must be >= 1, got {trial_seeds}")
    if not trial_cpu_s > 0:
        raise ConfigError(f"trial_cpu_s must be > 0, got {trial_cpu_s}")
    if workers < 1:
        raise ConfigError(f"workers must be >= 1, got {workers}")
    if address is not None and workers == 1:
        raise ConfigError(f"address={address!r} is for trials on a Ray cluster: give workers >= 2 too")
    if address is not None and (storage is None or storage.startswith("sqlite:")):
        raise ConfigError(f"trials on the Ray cluster at {address!r} need a storage every node reaches "
                          f"(postgresql://... or mysql://...), not {storage or 'the default SQLite file'}")


def _study_spec(main: Mapping[str, object], create: Mapping[str, object], *, seed: int, storage: Optional[str],
                study_name: Optional[str], out_dir: Optional[str], trials: int, trial_cpu_s: float,
                max_env_step: Optional[int], heartbeat_s: int, trial_seeds: int,
                on_cluster: bool, keep_checkpoints: bool) -> Tuple[StudySpec, Dict[str, object]]:
    """The study's spec (its search space around the config's own values) and the config's policy
    defaults, once every key, type and range of the config is checked (here, not in each trial)."""
    name, declared = policy_search_space(create, main)
    compiled = compile_config(copy.deepcopy(dict(main)), create_cfg=copy.deepcopy(dict(create)), seed=seed, save_cfg=False)
    if not on_cluster:  # trials on this machine (on a cluster's nodes, their own GPUs count)
        check_cuda(compiled)
    defaults = policy_defaults(create, main)
    space = around_config(declared, defaults)
    exp_name = str(main.get("exp_name") or f"{name}_tune")
    out_dir = os.path.abspath(out_dir or f"{exp_name}_tune")
    spec = StudySpec(main=dict(main), create=dict(create), space=space,
                     storage=storage or f"sqlite:///{default_db(out_dir)}", study_name=study_name or exp_name,
                     out_dir=out_dir, seed=seed, trials=trials, trial_cpu_s=trial_cpu_s, max_env_step=max_env_step,
                     heartbeat_s=heartbeat_s, trial_seeds=trial_seeds, keep_checkpoints=keep_checkpoints)
    return spec, defaults


def _summary(spec: StudySpec) -> TuneResult:
    """The finished study's best trial (its ``best_config.py`` written once more: workers' writes
    may have raced); a study where no trial completed is refused, naming the first failure."""
    from optuna.trial import TrialState

    study = open_study(spec, worker=0)
    done = [t for t in study.trials if t.state == TrialState.COMPLETE]
    if not done:
        failed = [str(t.user_attrs["error"]) for t in study.trials if t.state == TrialState.FAIL and "error" in t.user_attrs]
        pruned = sum(t.state == TrialState.PRUNED for t in study.trials)
        why = f"{len(failed)} failed (the first: {failed[0]})" if failed else "every trial was pruned or failed"
        raise ConfigError(f"no trial of study '{spec.study_name}' completed: {why}; {pruned} pruned")
    best = min(done, key=trial_value)
    write_best(spec, best)
    return TuneResult(best_config=spec.best_path, best_command=spec.best_command, best_value=trial_value(best),
                      best_params=config_values(spec.space, best.params), best_trial=int(best.number),
                      best_reached=bool(best.user_attrs.get("reached")), n_finished=finished_count(study),
                      study_name=spec.study_name, storage=spec.storage, out_dir=spec.out_dir, penalty=spec.penalty)


def optimize(spec: StudySpec, worker: int) -> int:
    """Run trials of the study until it holds ``spec.trials`` finished ones (every worker runs this,
    in its own process); returns how many this call ran."""
    from optuna.study import MaxTrialsCallback
    from optuna.trial import TrialState

    study = open_study(spec, worker)
    missing = spec.trials - finished_count(study)
    if missing <= 0:
        return 0
    # queued trials (the config's own values, retries) go to worker 0 alone: on SQLite two workers
    # can both take the same queued trial (no row lock), and the second one's result is refused
    while worker > 0 and study.get_trials(deepcopy=False, states=(TrialState.WAITING,)):
        time.sleep(0.2)

    with WorkerLock(spec.out_dir) as lock:  # held while this process runs trials: see retry_killed
        current: List[int] = []

        def objective(trial: Any) -> float:
            mark_trial(trial, lock)
            current[:] = [trial.number]
            try:
                return _run_trial(spec, trial)
            except ConfigError as e:  # the trial's values refused: kept with the failed trial for the summary
                trial.set_user_attr("error", " ".join(str(e).split()))
                raise

        before = len(study.trials)
        try:
            study.optimize(objective, n_trials=missing, catch=(ConfigError,),
                           callbacks=[lambda study, trial: record_trial(spec, study, trial),
                                      MaxTrialsCallback(spec.trials, states=(TrialState.COMPLETE, TrialState.PRUNED))])
        except KeyboardInterrupt:  # Optuna has failed the interrupted trial: its values run again on resume
            interrupted = [t for t in study.get_trials(deepcopy=True, states=(TrialState.FAIL,)) if t.number in current]
            for trial in interrupted:
                retry_callback()(study, trial)
            raise
        return len(study.trials) - before


def _run_trial(spec: StudySpec, trial: Any) -> float:
    """One trial: its values suggested, a serial run per run seed (the first pruned on its
    evaluations), its value the median of the runs' scores (train CPU-seconds to the confirmed stop
    value, else the penalty)."""
    import optuna

    from .serial_entry import serial_pipeline

    values = {key: suggest(trial, key, param) for key, param in spec.space.items()}
    scores: List[float] = []
    for k in range(spec.trial_seeds):
        run_seed = spec.seed + k
        stopped: List[str] = []  # the callback's reason, when it stopped the run
        policy = serial_pipeline([with_values(spec.main, values), spec.create], seed=run_seed,
                                 max_env_step=spec.max_env_step, exp_name=spec.run_dir(trial.number, run_seed),
                                 progress=False, on_eval=_on_eval(spec, trial, prune=k == 0, stopped=stopped))
        result = policy.result
        if result.get("interrupted"):  # first: a Ctrl-C is never lost to the callback's own stop
            raise KeyboardInterrupt(str(result.get("signal") or "SIGINT"))
        if stopped == [OVER_BUDGET]:
            scores.append(spec.penalty)
            continue
        if stopped:
            raise optuna.TrialPruned(stopped[0])
        scores.append(float(result["train_cpu_seconds"]) if result["stop"] else spec.penalty)
        trial.set_user_attr(f"env_step_seed{run_seed}", result["env_step"])
    value = float(statistics.median(scores))
    trial.set_user_attr("scores", scores)
    trial.set_user_attr("reached", value < spec.penalty)
    return value


def _on_eval(spec: StudySpec, trial: Any, prune: bool, stopped: List[str]) -> Callable[[Dict[str, object]], None]:
    """A trial run's evaluation callback: over the CPU budget it stops the run (the trial scores the
    penalty); with ``prune``, it reports the negated return as the trial's intermediate value at the
    evaluation's index and stops the run to prune the trial below the median. It stops the run the
    run core's way (:class:`~stride.entry.run.StopRun`, its reason appended to ``stopped``), never by an
    exception through the run: a Ctrl-C that came first stays the run's outcome."""
    evals = [0]

    def on_eval(row: Dict[str, object]) -> None:
        step = evals[0]
        evals[0] += 1
        if row["stop"]:
            return
        mean = as_float(row["eval_return_mean"], "progress row 'eval_return_mean'")
        if prune:
            trial.report(-mean, step)
        if as_float(row["train_cpu_seconds"], "progress row 'train_cpu_seconds'") > spec.trial_cpu_s:
            stopped.append(OVER_BUDGET)
        elif prune and trial.should_prune():
            stopped.append(f"return {mean:.1f} at evaluation {step} is below the median")
        if stopped:
            raise StopRun(stopped[0])

    return on_eval


def _optimize_on_ray(spec: StudySpec, workers: int, address: Optional[str]) -> None:
    """``workers`` Ray tasks, each running :func:`optimize` on one CPU; a failed task's error is
    raised here (the others are cancelled when the instance stops)."""
    from .parallel.cluster import joined_ray, local_ray, require_ray

    require_ray()
    cluster = joined_ray(address, run_dir=spec.out_dir) if address is not None else \
        local_ray(num_cpus=workers, run_dir=spec.out_dir)  # Ray's logs in the study's folder
    with cluster:
        import ray

        keep_exp_dirs()  # Ray started: the study starts, its folder stays
        task = ray.remote(num_cpus=1, max_retries=0)(optimize)
        refs = [task.remote(spec, k) for k in range(workers)]
        try:
            ray.get(refs)
        except ray.exceptions.RayTaskError as e:
            cause = e.cause if isinstance(e.cause, BaseException) else None
            raise cause if isinstance(cause, (ConfigError, KeyboardInterrupt)) else StrideError(
                f"a tuning worker failed: {' '.join(str(e).split())[-500:]}") from None
