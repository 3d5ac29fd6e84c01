"""A tuning study (:mod:`stride.entry.tune`) in its storage: its spec, opening and resuming it, the
check that a rerun searches the same space, and what it keeps on disk after each trial.

Storage: SQLite by default (``<out>/study.db``): running the same command again resumes the study
-- it runs only the trials still missing, and a trial left running by a process that is gone
(killed, even by SIGKILL) is failed and queued again with the same values at once, the retry
counted (:func:`~stride.entry.tune_state.retry_killed`: each process running trials holds a lock
the OS releases when it dies); so is a trial a Ctrl-C interrupted. Heartbeats still fail a trial
of a process on another machine once they are stale. The config, the storage URL and (on a
rerun) the study's search space are checked before the study's folder is made and any trial runs
(:func:`check_study`): a bad one is one line, not a traceback per trial.

Result: ``<out>/best_config.py``, a ready-to-run config file (the input config with the best
trial's values), rewritten atomically whenever a better trial completes. A trial's folder keeps
its config, ``result.json``, ``progress.csv`` and TensorBoard log; only the best trial's folders
keep their checkpoints (``ckpt/``), the previous best's removed once a better trial is recorded
(``keep_checkpoints``: every trial's; a study of 100 CartPole runs kept 222 MB of them). A killed
trial is retried anew, never resumed.
"""

from __future__ import annotations

import math
import os
import shlex
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional

from ..config.config import config_source, get_dotted
from ..config.search import FloatRange, IntRange, SearchParam, SearchSpace
from ..utils.errors import ConfigError
from ..utils.files import atomic_write_text
from .tune_space import config_values, known_values, with_values
from .tune_state import keep_best_checkpoints, retry_killed

if TYPE_CHECKING:
    import optuna
    from optuna.storages import RDBStorage, RetryHeartbeatStaleTrialCallback
    from optuna.trial import FrozenTrial


#: a trial that has not confirmed the stop value scores this many times its CPU budget
PENALTY_FACTOR = 2.0


@dataclass(frozen=True)
class StudySpec:
    """Everything a process needs to open the study and run trials (plain data: it travels to Ray
    workers as it is)."""

    main: Dict[str, object]
    create: Dict[str, object]
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


def default_db(out_dir: str) -> str:
    """The study's SQLite file when no ``--storage`` is given."""
    return os.path.join(out_dir, "study.db")


#: what ``--storage`` takes (the study's database; SQLAlchemy URLs)
STORAGE_CHOICES = ("sqlite:///PATH (in an existing folder), postgresql://USER:PASSWORD@HOST/DB or "
                   "mysql://USER:PASSWORD@HOST/DB (with its database driver installed)")


#: how many times one trial's values run again after its process died or was interrupted (bounded:
#: values that kill their process every time, out of memory say, must not hold the study forever)
MAX_RETRY = 2


def retry_callback() -> "RetryHeartbeatStaleTrialCallback":
    """What queues a failed trial's values again, the retry counted (:data:`MAX_RETRY`), for stale
    heartbeats, :func:`retry_killed` and interrupts alike."""
    import optuna
    from optuna.storages import RetryHeartbeatStaleTrialCallback

    with warnings.catch_warnings():  # marked experimental since Optuna 2.8
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRY)


def open_storage(spec: StudySpec) -> "RDBStorage":
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
                heartbeat_stale_trial_callback=retry_callback())
    except Exception as e:  # SQLAlchemy's and the drivers' errors have no common base
        lines = str(e).strip().splitlines()
        cause = " ".join(lines[0].split())[:300] if lines else ""
        raise ConfigError(f"storage {spec.storage!r} cannot be opened ({type(e).__name__}{': ' + cause if cause else ''}); "
                          f"valid choices: {STORAGE_CHOICES}") from None


def _distribution(param: SearchParam) -> Any:
    """The Optuna distribution :func:`~.tune_space.suggest` asks for ``param``."""
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


def check_study(spec: StudySpec, defaults: Mapping[str, object]) -> None:
    """The study already in ``spec.storage`` (if any) was searched over this search space: each
    key's kind and a choice's values (a range may widen) -- Optuna refuses a trial otherwise, so a
    config whose value of a searched key lies elsewhere than the study's (``--set`` on a rerun) is
    refused here in one line, before any trial."""
    import optuna

    store = open_storage(spec)
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


def open_study(spec: StudySpec, worker: int) -> "optuna.Study":
    """The study (created on first use), with this worker's sampler: TPE seeded ``seed + worker``."""
    import optuna

    return optuna.create_study(
        storage=open_storage(spec), study_name=spec.study_name, direction="minimize", load_if_exists=True,
        sampler=optuna.samplers.TPESampler(seed=spec.seed + worker, multivariate=True,
                                           n_startup_trials=max(5, spec.trials // 4)),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=1))


def finished_count(study: "optuna.Study") -> int:
    """How many of the study's trials are finished (complete or pruned)."""
    from optuna.trial import TrialState

    return sum(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in study.trials)


def resume_study(spec: StudySpec, defaults: Mapping[str, object]) -> "optuna.Study":
    """The study, opened: a new one with the config's own values queued as trial 0; a resumed one
    with the trials of processes that are gone failed and their values queued again, and the
    checkpoints no longer needed removed."""
    study = open_study(spec, worker=0)
    if not study.trials:
        study.enqueue_trial(known_values(defaults, spec.space))
    for number in retry_killed(study, spec.out_dir, retry_callback()):
        print(f"stride: trial {number} was left running by a process that is gone: failed, its values queued again")
    sweep_checkpoints(spec, study)
    return study


def sweep_checkpoints(spec: StudySpec, study: "optuna.Study") -> None:
    """Finished trials keep no checkpoints but the best's (unless ``spec.keep_checkpoints``)."""
    if not spec.keep_checkpoints:
        keep_best_checkpoints(spec.run_dirs, study)


def trial_value(trial: "FrozenTrial") -> float:
    """A finished trial's value (a complete trial always has one; one without ranks last)."""
    return math.inf if trial.value is None else float(trial.value)


def record_trial(spec: StudySpec, study: "optuna.Study", trial: "FrozenTrial") -> None:
    """After the study has recorded ``trial``: ``best_config.py`` rewritten if it is the best so
    far, then the checkpoints no longer needed removed (the previous best's among them)."""
    from optuna.trial import TrialState

    done = [t for t in study.trials if t.state == TrialState.COMPLETE]
    if done:
        best = min(done, key=trial_value)
        if best.number == trial.number or not os.path.exists(spec.best_path):
            write_best(spec, best)
    sweep_checkpoints(spec, study)


def write_best(spec: StudySpec, best: "FrozenTrial") -> None:
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
