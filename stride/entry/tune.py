"""``stride -m tune``: hyper-parameter search with Optuna over a policy's declared search space.

Each trial is one ordinary serial run (:func:`stride.entry.serial_pipeline`, its own experiment
folder under ``<out>/trials/``) of the config with the trial's values written in. The objective is
the one the benchmarks judge by: **train CPU-seconds to the config's confirmed stop value** (the
evaluator's screen plus its ``confirm_episode`` confirmation), minimised. A trial that has not
confirmed within ``trial_cpu_s`` train CPU-seconds (or ``max_env_step``) scores a fixed penalty,
``2 * trial_cpu_s``, so that every trial that got there ranks above every trial that did not.

- Sampler: TPE (multivariate), seeded; the config's own values are enqueued as the first trial, so
  the study starts from the known config and its best is never one the study did not compare with it
  (the declared space is widened to hold them where the config lies outside it: :func:`around_config`).
- Pruner: median (Optuna's ``MedianPruner``) on the evaluation return. Optuna compares intermediate
  values in the study's direction (minimise), so the value reported after each evaluation is the
  *negated* 10-episode mean return; its step is the evaluation's index (the same env-step schedule
  in every trial of one config).
- Storage: SQLite by default (``<out>/study.db``): running the same command again resumes the study
  -- it runs only the trials still missing, and a trial left running by a process that is gone
  (killed, even by SIGKILL) is failed and queued again with the same values at once, the retry
  counted (:func:`~stride.entry.tune_state.retry_killed`: each process running trials holds a lock
  the OS releases when it dies); so is a trial a Ctrl-C interrupted. Heartbeats still fail a trial
  of a process on another machine once they are stale. The config, the storage URL and (on a
  rerun) the study's search space are checked before the study's folder is made and any trial runs
  (:func:`check_study`): a bad one is one line, not a traceback per trial.
- Result: ``<out>/best_config.py``, a ready-to-run config file (the input config with the best
  trial's values), rewritten atomically whenever a better trial completes. A trial's folder keeps
  its config, ``result.json``, ``progress.csv`` and TensorBoard log; only the best trial's folders
  keep their checkpoints (``ckpt/``), the previous best's removed once a better trial is recorded
  (``keep_checkpoints``: every trial's; a study of 100 CartPole runs kept 222 MB of them). A killed
  trial is retried anew, never resumed.

Better than rl-zoo3's ``--optimize`` on purpose: the objective is cost to a *confirmed* solve (rl-zoo3
optimises the last evaluation's mean return at a fixed budget, which rewards a lucky screen);
search spaces are declared by each policy next to its defaults and checked against its config
(rl-zoo3 keeps samplers in a separate file); the known config is always trial 0.
"""

from __future__ import annotations

import copy
import os
import shlex
import statistics
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, TypedDict

from ..config.compile import compile_config, default_main_config, keep_exp_dirs, make_exp_dir, provisional_exp_dirs
from ..config.config import config_source, deep_update, get_dotted, section
from ..config.setting import plain
from ..config.search import Choice, FloatRange, IntRange, SearchParam, SearchSpace, check_search_space
from ..policy.base_policy import Policy
from ..utils.errors import ConfigError, StrideError
from ..utils.extras import import_extra
from ..utils.files import atomic_write_text
from ..utils.narrow import as_float
from ..utils.registry import POLICY_REGISTRY, import_components
from .tune_state import WorkerLock, keep_best_checkpoints, mark_trial, retry_killed
from .utils import ConfigInput, ConfigPair, check_cuda, read_config

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


def _policy_name(create: Mapping[str, Any]) -> str:
    name = create.get("policy", {}).get("type")
    if not isinstance(name, str):
        raise ConfigError(f"create_config.policy.type must name a policy, got {name!r}")
    return name


def policy_defaults(create: Mapping[str, object], main: Mapping[str, object]) -> Dict[str, object]:
    """The config's ``policy`` section as a run will see it: the policy's defaults, its model's
    (the model class's keyword defaults, so ``model.encoder_hidden_size_list`` is a setting even
    where the config leaves it out) and the user's values over them."""
    import_components()
    tree = plain(default_main_config(create, main)["policy"])
    return deep_update(tree, copy.deepcopy(dict(section(main, "policy"))))


def policy_search_space(create: Mapping[str, object], main: Mapping[str, object]) -> Tuple[str, SearchSpace]:
    """The policy type of a config and its declared search space (checked against its config)."""
    import_components()
    name = _policy_name(create)
    cls = POLICY_REGISTRY.get(name)
    space: SearchSpace = getattr(cls, "search_space", {}) if isinstance(cls, type) and issubclass(cls, Policy) else {}
    if not space:
        tunable = sorted(n for n in POLICY_REGISTRY.names()
                         if getattr(POLICY_REGISTRY.get(n), "search_space", None))
        raise ConfigError(f"policy '{name}' declares no search space; tunable policies: {', '.join(tunable)}")
    check_search_space(space, policy_defaults(create, main), name)
    return name, space


def with_values(main: Mapping[str, object], values: Mapping[str, object]) -> Dict[str, object]:
    """A copy of ``main`` with each ``policy.<dotted key>`` set to its value."""
    out = copy.deepcopy(dict(main))
    for key, value in values.items():
        node = _section(out, "policy", "policy")
        parts = key.split(".")
        for k, part in enumerate(parts[:-1]):
            node = _section(node, part, "policy." + ".".join(parts[:k + 1]))
        node[parts[-1]] = value
    return out


def _section(tree: Dict[str, object], key: str, where: str) -> Dict[str, object]:
    """``tree[key]``, a dict (made empty where missing); a value there that is not one is refused."""
    node = tree.setdefault(key, {})
    if not isinstance(node, dict):
        raise ConfigError(f"{where} is {node!r}, not a section: a searched key cannot go under it")
    return node


def _suggest(trial: Any, key: str, param: SearchParam) -> object:
    if isinstance(param, FloatRange):
        return trial.suggest_float(key, param.low, param.high, log=param.log)
    if isinstance(param, IntRange):
        return trial.suggest_int(key, param.low, param.high, log=param.log)
    return param.decode(trial.suggest_categorical(key, list(param.labels)))


def config_values(space: SearchSpace, params: Mapping[str, object]) -> Dict[str, object]:
    """A trial's stored params as config values (a choice's label, e.g. ``'[64, 64]'``, back to its
    value); keys the space lacks are refused."""
    out: Dict[str, object] = {}
    for key, raw in params.items():
        if key not in space:
            raise ConfigError(f"'{key}' is not a key of the study's search space; keys: {', '.join(space)}")
        param = space[key]
        if not isinstance(param, Choice):
            out[key] = raw
        elif raw is None or isinstance(raw, (bool, int, float, str)):
            out[key] = param.decode(raw)
        else:
            raise ConfigError(f"'{key}' holds {raw!r}: a stored choice is a label (None, a number or a string)")
    return out


def _in_space(value: object, param: SearchParam) -> bool:
    if isinstance(param, Choice):
        return value in param
    return isinstance(value, (int, float)) and not isinstance(value, bool) and param.low <= value <= param.high


def around_config(space: SearchSpace, defaults: Mapping[str, object]) -> Dict[str, SearchParam]:
    """The study's space: the declared one widened to hold the config's own value of each key (a
    choice gains it, a range stretches to it), so trial 0 is always the config itself -- a zoo config
    whose net is ``[512, 64]`` or whose ``update_per_collect`` is 10 would otherwise start the study
    from a config nobody wrote. A value of the wrong kind for its range (None, a string) is left out."""
    out: Dict[str, SearchParam] = {}
    for key, param in space.items():
        value = get_dotted(defaults, key)
        if isinstance(param, Choice):
            out[key] = param if value in param else Choice(*param.values, copy.deepcopy(value))
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or (param.log and value <= 0) \
                or (isinstance(param, IntRange) and not isinstance(value, int)) or param.low <= value <= param.high:
            out[key] = param
        elif isinstance(param, IntRange):
            out[key] = IntRange(min(param.low, int(value)), max(param.high, int(value)), param.log)
        else:
            out[key] = FloatRange(min(param.low, float(value)), max(param.high, float(value)), param.log)
    return out


def _known_values(defaults: Mapping[str, object], space: SearchSpace) -> Dict[str, object]:
    """The config's own value of each searched key (``defaults``: :func:`policy_defaults`), as the
    study stores it, where it lies in the space: trial 0."""
    out: Dict[str, object] = {}
    for key, param in space.items():
        value = get_dotted(defaults, key)
        if _in_space(value, param):
            out[key] = param.encode(value) if isinstance(param, Choice) else value
    return out


@dataclass(frozen=True)
class _Study:
    """Everything a process needs to open the study and run trials (plain data: it travels to Ray
    workers as it is)."""

    main: Dict[str, Any]
    create: Dict[str, Any]
    space: SearchSpace
    storage: str
    study_name: str
    out_dir: str
    seed: int
    trials: int
    trial_cpu_s: float
    max_env_step: Optional[int]
    heartbeat_s: int
    trial_seeds: int
    keep_checkpoints: bool

    @property
    def penalty(self) -> float:
        return PENALTY_FACTOR * self.trial_cpu_s

    @property
    def best_path(self) -> str:
        return os.path.join(self.out_dir, "best_config.py")

    @property
    def best_command(self) -> str:
        """The command that trains the best config as its trials ran (their first run seed)."""
        return f"stride -m serial -c {shlex.quote(self.best_path)} -s {self.seed}"

    def run_dir(self, number: int, run_seed: int) -> str:
        """The experiment folder of trial ``number``'s run with ``run_seed``."""
        return os.path.join(self.out_dir, "trials", f"trial_{number:04d}_seed{run_seed}")

    def run_dirs(self, number: int) -> List[str]:
        """The experiment folders of trial ``number``'s runs (one per run seed)."""
        return [self.run_dir(number, self.seed + k) for k in range(self.trial_seeds)]


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
    import_extra("optuna", "tune", "stride -m tune")  # one line naming the extra when Optuna is missing
    main, create = _pair(input_cfg)
    spec, defaults = _study_spec(main, create, seed=seed, storage=storage, study_name=study_name, out_dir=out_dir,
                                 trials=trials, trial_cpu_s=trial_cpu_s, max_env_step=max_env_step,
                                 heartbeat_s=heartbeat_s, trial_seeds=trial_seeds, on_cluster=address is not None,
                                 keep_checkpoints=keep_checkpoints)
    if storage is not None or os.path.isfile(_default_db(spec.out_dir)):  # (a new default study: nothing to check)
        check_study(spec, defaults)  # before the folder is made and any trial runs
    make_exp_dir(spec.out_dir, renew=False)  # the same folder resumes the study
    study = _resume(spec, defaults)
    if trials - _finished(study) > 0:
        if workers == 1:
            keep_exp_dirs()  # the study starts: its folder stays
            optimize(spec, worker=0)
        else:
            _optimize_on_ray(spec, workers, address)
    return _summary(spec)


def _resume(spec: _Study, defaults: Mapping[str, object]) -> Any:
    """The study, opened: a new one with the config's own values queued as trial 0; a resumed one
    with the trials of processes that are gone failed and their values queued again, and the
    checkpoints no longer needed removed."""
    study = _open(spec, worker=0)
    if not study.trials:
        study.enqueue_trial(_known_values(defaults, spec.space))
    for number in retry_killed(study, spec.out_dir, _retry()):
        print(f"stride: trial {number} was left running by a process that is gone: failed, its values queued again")
    _sweep(spec, study)
    return study


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


def _default_db(out_dir: str) -> str:
    return os.path.join(out_dir, "study.db")


def _study_spec(main: Mapping[str, object], create: Mapping[str, object], *, seed: int, storage: Optional[str],
                study_name: Optional[str], out_dir: Optional[str], trials: int, trial_cpu_s: float,
                max_env_step: Optional[int], heartbeat_s: int, trial_seeds: int,
                on_cluster: bool, keep_checkpoints: bool) -> Tuple[_Study, Dict[str, object]]:
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
    spec = _Study(main=dict(main), create=dict(create), space=space,
                  storage=storage or f"sqlite:///{_default_db(out_dir)}", study_name=study_name or exp_name,
                  out_dir=out_dir, seed=seed, trials=trials, trial_cpu_s=trial_cpu_s, max_env_step=max_env_step,
                  heartbeat_s=heartbeat_s, trial_seeds=trial_seeds, keep_checkpoints=keep_checkpoints)
    return spec, defaults


def _summary(spec: _Study) -> TuneResult:
    """The finished study's best trial (its ``best_config.py`` written once more: workers' writes
    may have raced); a study where no trial completed is refused, naming the first failure."""
    from optuna.trial import TrialState

    study = _open(spec, worker=0)
    done = [t for t in study.trials if t.state == TrialState.COMPLETE]
    if not done:
        failed = [str(t.user_attrs["error"]) for t in study.trials if t.state == TrialState.FAIL and "error" in t.user_attrs]
        pruned = sum(t.state == TrialState.PRUNED for t in study.trials)
        why = f"{len(failed)} failed (the first: {failed[0]})" if failed else "every trial was pruned or failed"
        raise ConfigError(f"no trial of study '{spec.study_name}' completed: {why}; {pruned} pruned")
    best = min(done, key=lambda t: t.value)
    _write_best(spec, best)
    return TuneResult(best_config=spec.best_path, best_command=spec.best_command, best_value=float(best.value),
                      best_params=config_values(spec.space, best.params), best_trial=int(best.number),
                      best_reached=bool(best.user_attrs.get("reached")), n_finished=_finished(study),
                      study_name=spec.study_name, storage=spec.storage, out_dir=spec.out_dir, penalty=spec.penalty)


#: what ``--storage`` takes (the study's database; SQLAlchemy URLs)
STORAGE_CHOICES = ("sqlite:///PATH (in an existing folder), postgresql://USER:PASSWORD@HOST/DB or "
                   "mysql://USER:PASSWORD@HOST/DB (with its database driver installed)")


#: how many times one trial's values run again after its process died or was interrupted (bounded:
#: values that kill their process every time, out of memory say, must not hold the study forever)
MAX_RETRY = 2


def _retry() -> Any:
    """What queues a failed trial's values again, the retry counted (:data:`MAX_RETRY`), for stale
    heartbeats, :func:`retry_killed` and interrupts alike."""
    import optuna
    from optuna.storages import RetryHeartbeatStaleTrialCallback

    with warnings.catch_warnings():  # marked experimental since Optuna 2.8
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRY)


def _sweep(spec: _Study, study: Any) -> None:
    """Finished trials keep no checkpoints but the best's (unless ``spec.keep_checkpoints``)."""
    if not spec.keep_checkpoints:
        keep_best_checkpoints(spec.run_dirs, study)


def _storage(spec: _Study) -> Any:
    """The study's database (Optuna's ``RDBStorage``, with heartbeats); one line when it cannot be
    opened (a URL SQLAlchemy cannot parse, an unknown dialect, a missing driver or folder)."""
    import optuna

    if spec.storage.startswith("sqlite:///"):  # SQLite creates the file, not its folder
        folder = os.path.dirname(os.path.abspath(spec.storage[len("sqlite:///"):]))
        if not os.path.isdir(folder):
            raise ConfigError(f"storage {spec.storage!r}: the folder '{folder}' does not exist; valid choices: "
                              f"{STORAGE_CHOICES}")
    try:
        with warnings.catch_warnings():  # heartbeats are marked experimental (they fail a remote process's trials)
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.storages.RDBStorage(
                spec.storage, heartbeat_interval=spec.heartbeat_s, grace_period=3 * spec.heartbeat_s,
                heartbeat_stale_trial_callback=_retry())
    except Exception as e:  # SQLAlchemy's and the drivers' errors have no common base
        lines = str(e).strip().splitlines()
        cause = " ".join(lines[0].split())[:300] if lines else ""
        raise ConfigError(f"storage {spec.storage!r} cannot be opened ({type(e).__name__}{': ' + cause if cause else ''}); "
                          f"valid choices: {STORAGE_CHOICES}") from None


def _distribution(param: SearchParam) -> Any:
    """The Optuna distribution :func:`_suggest` asks for ``param``."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    if isinstance(param, FloatRange):
        return FloatDistribution(param.low, param.high, log=param.log)
    if isinstance(param, IntRange):
        return IntDistribution(param.low, param.high, log=param.log)
    return CategoricalDistribution(list(param.labels))


def _describe(dist: Any) -> str:
    choices = getattr(dist, "choices", None)
    if choices is not None:
        return f"the choices {', '.join(str(c) for c in choices)}"
    return f"[{dist.low:g}, {dist.high:g}]{' (log scale)' if dist.log else ''}"


def _compatible(old: Any, new: Any) -> bool:
    """Whether Optuna takes ``new`` for a parameter a study already searched with ``old``: the same
    kind, the same choices, the same scale (a range may widen). Optuna's own check
    (``optuna.distributions.check_distribution_compatibility``) says it is not for library users."""
    if type(old) is not type(new):
        return False
    old_choices = getattr(old, "choices", None)
    if old_choices is not None:
        return tuple(old_choices) == tuple(new.choices)
    return bool(old.log == new.log)


def check_study(spec: _Study, defaults: Mapping[str, object]) -> None:
    """The study already in ``spec.storage`` (if any) was searched over this search space: each
    key's kind and a choice's values (a range may widen) -- Optuna refuses a trial otherwise, so a
    config whose value of a searched key lies elsewhere than the study's (``--set`` on a rerun) is
    refused here in one line, before any trial."""
    import optuna

    store = _storage(spec)
    if spec.study_name not in optuna.get_all_study_names(store):
        return
    seen: Dict[str, Any] = {}
    for t in optuna.load_study(study_name=spec.study_name, storage=store).get_trials(deepcopy=False):
        for key, dist in t.distributions.items():
            seen.setdefault(key, dist)
    where = f"study '{spec.study_name}' ({spec.storage})"
    new_study = "or start a new study (another --exp-name or --storage)"
    for key, old in seen.items():
        if key not in spec.space:
            raise ConfigError(f"{where} searched '{key}', which this config's search space lacks (keys: "
                              f"{', '.join(spec.space)}): run it with the config it started from, {new_study}")
        new = _distribution(spec.space[key])
        if not _compatible(old, new):
            value = f"this config's policy.{key}={get_dotted(defaults, key)!r}"
            change = f"{value} is not one of them" if getattr(old, "choices", None) is not None else \
                f"{value} makes it {_describe(new)}"
            raise ConfigError(f"{where} searched policy.{key} over {_describe(old)}; {change}, and a study's search "
                              f"space cannot change so: give a value within it, {new_study}") from None


def _open(spec: _Study, worker: int) -> Any:
    """The study (created on first use), with this worker's sampler: TPE seeded ``seed + worker``."""
    import optuna

    return optuna.create_study(
        storage=_storage(spec), study_name=spec.study_name, direction="minimize", load_if_exists=True,
        sampler=optuna.samplers.TPESampler(seed=spec.seed + worker, multivariate=True,
                                           n_startup_trials=max(5, spec.trials // 4)),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=1))


def _finished(study: Any) -> int:
    from optuna.trial import TrialState

    return sum(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in study.trials)


def optimize(spec: _Study, worker: int) -> int:
    """Run trials of the study until it holds ``spec.trials`` finished ones (every worker runs this,
    in its own process); returns how many this call ran."""
    from optuna.study import MaxTrialsCallback
    from optuna.trial import TrialState

    study = _open(spec, worker)
    missing = spec.trials - _finished(study)
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
                           callbacks=[lambda study, trial: _recorded(spec, study, trial),
                                      MaxTrialsCallback(spec.trials, states=(TrialState.COMPLETE, TrialState.PRUNED))])
        except KeyboardInterrupt:  # Optuna has failed the interrupted trial: its values run again on resume
            interrupted = [t for t in study.get_trials(deepcopy=True, states=(TrialState.FAIL,)) if t.number in current]
            for trial in interrupted:
                _retry()(study, trial)
            raise
        return len(study.trials) - before


def _recorded(spec: _Study, study: Any, trial: Any) -> None:
    """After the study has recorded ``trial``: ``best_config.py`` rewritten if it is the best so
    far, then the checkpoints no longer needed removed (the previous best's among them)."""
    from optuna.trial import TrialState

    done = [t for t in study.trials if t.state == TrialState.COMPLETE]
    if done:
        best = min(done, key=lambda t: t.value)
        if best.number == trial.number or not os.path.exists(spec.best_path):
            _write_best(spec, best)
    _sweep(spec, study)


def _run_trial(spec: _Study, trial: Any) -> float:
    """One trial: its values suggested, a serial run per run seed (the first pruned on its
    evaluations), its value the median of the runs' scores (train CPU-seconds to the confirmed stop
    value, else the penalty)."""
    from .serial_entry import serial_pipeline

    values = {key: _suggest(trial, key, param) for key, param in spec.space.items()}
    scores: List[float] = []
    for k in range(spec.trial_seeds):
        run_seed = spec.seed + k
        try:
            policy = serial_pipeline([with_values(spec.main, values), spec.create], seed=run_seed,
                                     max_env_step=spec.max_env_step, exp_name=spec.run_dir(trial.number, run_seed),
                                     progress=False, on_eval=_on_eval(spec, trial, prune=k == 0))
        except TrialOverBudget:
            scores.append(spec.penalty)
            continue
        result = policy.result
        if result.get("interrupted"):
            raise KeyboardInterrupt(str(result.get("signal") or "SIGINT"))
        scores.append(float(result["train_cpu_seconds"]) if result["stop"] else spec.penalty)
        trial.set_user_attr(f"env_step_seed{run_seed}", result["env_step"])
    value = float(statistics.median(scores))
    trial.set_user_attr("scores", scores)
    trial.set_user_attr("reached", value < spec.penalty)
    return value


def _on_eval(spec: _Study, trial: Any, prune: bool) -> Callable[[Dict[str, object]], None]:
    """A trial run's evaluation callback: over the CPU budget it ends the run (the trial scores the
    penalty); with ``prune``, it reports the negated return as the trial's intermediate value at the
    evaluation's index and prunes the trial below the median."""
    import optuna

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
            raise TrialOverBudget()
        if prune and trial.should_prune():
            raise optuna.TrialPruned(f"return {mean:.1f} at evaluation {step} is below the median")

    return on_eval


def _write_best(spec: _Study, best: Any) -> None:
    """``best_config.py``: the input config with the best trial's values, written atomically."""
    reached = bool(best.user_attrs.get("reached"))
    header = (f'"""Best config of the Stride tuning study \'{spec.study_name}\' ({spec.storage}), trial {best.number}:\n'
              f"{'train CPU-seconds to the confirmed stop value' if reached else 'not confirmed (penalty)'}: "
              f"{best.value:.2f} (median over run seeds {spec.seed}..{spec.seed + spec.trial_seeds - 1}: "
              f"{best.user_attrs.get('scores')}).\n\n"
              f"Run it: {spec.best_command}\n"
              f"Searched values: {config_values(spec.space, best.params)}\n"
              '"""\n\n')
    atomic_write_text(spec.best_path, config_source(with_values(spec.main, config_values(spec.space, best.params)), spec.create, header))


def _optimize_on_ray(spec: _Study, workers: int, address: Optional[str]) -> None:
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
