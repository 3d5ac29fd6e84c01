"""``stride -m tune``: hyper-parameter search with Optuna over a policy's declared search space.

Each trial is one ordinary serial run (:func:`stride.entry.serial_pipeline`, its own experiment
folder under ``<out>/trials/``) of the config with the trial's values written in. The objective is
the one the benchmarks judge by: **train CPU-seconds to the config's confirmed stop value** (the
evaluator's screen plus its ``confirm_episode`` confirmation), minimised. A trial that has not
confirmed within ``trial_cpu_s`` train CPU-seconds (or ``max_env_step``) scores a fixed penalty,
``2 * trial_cpu_s``, so that every trial that got there ranks above every trial that did not.

- Sampler: TPE (multivariate), seeded; the config's own values are enqueued as the first trial, so
  the study starts from the known config and its best is never one the study did not compare with it.
- Pruner: median (Optuna's ``MedianPruner``) on the evaluation return. Optuna compares intermediate
  values in the study's direction (minimise), so the value reported after each evaluation is the
  *negated* 10-episode mean return; its step is the evaluation's index (the same env-step schedule
  in every trial of one config).
- Storage: SQLite by default (``<out>/study.db``) with heartbeats: running the same command again
  resumes the study -- it runs only the trials still missing, and a trial left running by a killed
  process is marked failed once its heartbeat is stale and queued again with the same values.
- Result: ``<out>/best_config.py``, a ready-to-run config file (the input config with the best
  trial's values), rewritten atomically whenever a better trial completes.

Better than rl-zoo3's ``--optimize`` on purpose: the objective is cost to a *confirmed* solve (rl-zoo3
optimises the last evaluation's mean return at a fixed budget, which rewards a lucky screen);
search spaces are declared by each policy next to its defaults and checked against its config
(rl-zoo3 keeps samplers in a separate file); the known config is always trial 0.
"""

from __future__ import annotations

import copy
import os
import statistics
import warnings
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..config.config import config_source, deep_update
from ..config.search import Choice, FloatRange, IntRange, SearchParam, SearchSpace, check_search_space
from ..policy.base_policy import Policy
from ..utils.errors import ConfigError
from ..utils.extras import import_extra
from ..utils.files import atomic_write_text
from ..utils.registry import POLICY_REGISTRY, import_components
from .utils import ConfigInput, ConfigPair, read_config

#: a trial that has not confirmed the stop value scores this many times its CPU budget
PENALTY_FACTOR = 2.0


class TrialOverBudget(Exception):
    """Raised from a trial's evaluation callback when its train CPU passes the budget."""


def _pair(input_cfg: ConfigInput) -> ConfigPair:
    if isinstance(input_cfg, str):
        return read_config(input_cfg)
    if len(input_cfg) != 2:
        raise ConfigError(f"a config is [main_config, create_config], got {len(input_cfg)} parts")
    return input_cfg[0], input_cfg[1]


def policy_search_space(create: Mapping[str, Any], main: Mapping[str, Any]) -> Tuple[str, SearchSpace]:
    """The policy type of a config and its declared search space (checked against its config)."""
    import_components()
    name = create.get("policy", {}).get("type")
    if not isinstance(name, str):
        raise ConfigError(f"create_config.policy.type must name a policy, got {name!r}")
    cls = POLICY_REGISTRY.get(name)
    space: SearchSpace = getattr(cls, "search_space", {}) if isinstance(cls, type) and issubclass(cls, Policy) else {}
    if not space:
        tunable = sorted(n for n in POLICY_REGISTRY.names()
                         if getattr(POLICY_REGISTRY.get(n), "search_space", None))
        raise ConfigError(f"policy '{name}' declares no search space; tunable policies: {', '.join(tunable)}")
    assert isinstance(cls, type) and issubclass(cls, Policy)
    defaults = deep_update(cls.default_config().to_dict(), dict(main.get("policy", {})))
    check_search_space(space, defaults, name)
    return name, space


def with_values(main: Mapping[str, Any], values: Mapping[str, object]) -> Dict[str, Any]:
    """A copy of ``main`` with each ``policy.<dotted key>`` set to its value."""
    out = copy.deepcopy(dict(main))
    for key, value in values.items():
        node = out.setdefault("policy", {})
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out


def _suggest(trial: Any, key: str, param: SearchParam) -> object:
    if isinstance(param, FloatRange):
        return trial.suggest_float(key, param.low, param.high, log=param.log)
    if isinstance(param, IntRange):
        return trial.suggest_int(key, param.low, param.high, log=param.log)
    return trial.suggest_categorical(key, list(param.values))


def _in_space(value: object, param: SearchParam) -> bool:
    if isinstance(param, Choice):
        return value in param.values
    return isinstance(value, (int, float)) and not isinstance(value, bool) and param.low <= value <= param.high


def _known_values(main: Mapping[str, Any], defaults: Mapping[str, Any], space: SearchSpace) -> Dict[str, object]:
    """The config's own value of each searched key (the user's, else the policy's default), where it
    lies in the space: trial 0."""
    from ..config.config import get_dotted

    out: Dict[str, object] = {}
    for key, param in space.items():
        value = get_dotted(main.get("policy", {}), key, get_dotted(defaults, key))
        if _in_space(value, param):
            out[key] = value
    return out


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
) -> Dict[str, Any]:
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

    Returns: a summary: ``best_config`` (path), ``best_value``, ``best_params``, ``best_reached``,
    ``n_finished``, ``study_name``, ``storage``.
    """
    if trials < 1:
        raise ConfigError(f"--trials must be >= 1, got {trials}")
    if trial_seeds < 1:
        raise ConfigError(f"trial_seeds must be >= 1, got {trial_seeds}")
    if not trial_cpu_s > 0:
        raise ConfigError(f"trial_cpu_s must be > 0, got {trial_cpu_s}")
    optuna = import_extra("optuna", "tune", "stride -m tune")
    from optuna.storages import RetryHeartbeatStaleTrialCallback
    from optuna.trial import TrialState

    from .serial_entry import serial_pipeline

    main, create = _pair(input_cfg)
    name, space = policy_search_space(create, main)
    cls = POLICY_REGISTRY.get(name)
    assert isinstance(cls, type) and issubclass(cls, Policy)
    defaults = cls.default_config().to_dict()
    exp_name = str(main.get("exp_name") or f"{name}_tune")
    out_dir = os.path.abspath(out_dir or f"{exp_name}_tune")
    os.makedirs(out_dir, exist_ok=True)
    storage = storage or f"sqlite:///{os.path.join(out_dir, 'study.db')}"
    study_name = study_name or exp_name
    penalty = PENALTY_FACTOR * trial_cpu_s
    if storage.startswith(("sqlite:", "postgresql", "mysql")):
        with warnings.catch_warnings():  # heartbeats are marked experimental; they are what resumes a killed study
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            store: Any = optuna.storages.RDBStorage(
                storage, heartbeat_interval=heartbeat_s, grace_period=3 * heartbeat_s,
                heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=1))
    else:
        store = storage
    study = optuna.create_study(
        storage=store, study_name=study_name, direction="minimize", load_if_exists=True,
        sampler=optuna.samplers.TPESampler(seed=seed, multivariate=True, n_startup_trials=max(5, trials // 4)),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=1))
    if not study.trials:
        study.enqueue_trial(_known_values(main, defaults, space))
    best_path = os.path.join(out_dir, "best_config.py")

    def objective(trial: Any) -> float:
        values = {key: _suggest(trial, key, param) for key, param in space.items()}
        evals: List[int] = [0]

        def on_eval(row: Dict[str, Any]) -> None:
            step = evals[0]
            evals[0] += 1
            if row["stop"]:
                return
            trial.report(-float(row["eval_return_mean"]), step)
            if float(row["train_cpu_seconds"]) > trial_cpu_s:
                raise TrialOverBudget()
            if trial.should_prune():
                raise optuna.TrialPruned(f"return {row['eval_return_mean']:.1f} at evaluation {step} is below the median")

        def ignore(row: Dict[str, Any]) -> None:
            if not row["stop"] and float(row["train_cpu_seconds"]) > trial_cpu_s:
                raise TrialOverBudget()

        scores: List[float] = []
        for k in range(trial_seeds):
            exp = os.path.join(out_dir, "trials", f"trial_{trial.number:04d}_seed{seed + k}")
            try:
                policy = serial_pipeline([with_values(main, values), create], seed=seed + k, max_env_step=max_env_step,
                                         exp_name=exp, progress=False, on_eval=on_eval if k == 0 else ignore)
            except TrialOverBudget:
                scores.append(penalty)
                continue
            result = policy.result
            if result.get("interrupted"):
                raise KeyboardInterrupt
            scores.append(float(result["train_cpu_seconds"]) if result["stop"] else penalty)
            trial.set_user_attr(f"env_step_seed{seed + k}", result["env_step"])
        value = float(statistics.median(scores))
        trial.set_user_attr("scores", scores)
        trial.set_user_attr("reached", value < penalty)
        return value

    def write_best(study: Any, _trial: Any) -> None:
        done = [t for t in study.trials if t.state == TrialState.COMPLETE]
        if not done:
            return
        best = min(done, key=lambda t: t.value)
        if best.number != _trial.number and os.path.exists(best_path):
            return  # unchanged
        reached = bool(best.user_attrs.get("reached"))
        header = (f'"""Best config of the Stride tuning study \'{study_name}\' ({storage}), trial {best.number}:\n'
                  f"{'train CPU-seconds to the confirmed stop value' if reached else 'not confirmed (penalty)'}: "
                  f"{best.value:.2f} (median over run seeds {seed}..{seed + trial_seeds - 1}: "
                  f"{best.user_attrs.get('scores')}).\n\n"
                  f"Run it: stride -m serial -c {os.path.basename(best_path)} -s 0\n"
                  f"Searched values: {dict(best.params)}\n"
                  '"""\n\n')
        atomic_write_text(best_path, config_source(with_values(main, best.params), create, header))

    def finished() -> int:
        return sum(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in study.trials)

    missing = trials - finished()
    if missing > 0:
        study.optimize(objective, n_trials=missing, catch=(ConfigError,), callbacks=[write_best])
    done = [t for t in study.trials if t.state == TrialState.COMPLETE]
    if not done:
        raise ConfigError(f"no trial of study '{study_name}' completed (all pruned or failed): see {out_dir}/trials")
    best = min(done, key=lambda t: t.value)
    if not os.path.exists(best_path):
        write_best(study, best)
    return {"best_config": best_path, "best_value": float(best.value), "best_params": dict(best.params),
            "best_trial": best.number, "best_reached": bool(best.user_attrs.get("reached")),
            "n_finished": finished(), "study_name": study_name, "storage": storage, "out_dir": out_dir,
            "penalty": penalty}
