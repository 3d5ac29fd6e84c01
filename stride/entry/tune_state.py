"""What a tuning study (:mod:`stride.entry.tune`) keeps beside its storage, on the disk its trials
run on: which live process runs which trial, and which trial folders keep their checkpoints.

**Liveness without a wait.** Each process that runs trials holds an exclusive ``flock`` on a file of
its own under ``<out>/workers/`` for as long as it runs them (:class:`WorkerLock`), and each trial it
starts records that file (:func:`mark_trial`). The OS releases the lock when the process ends,
however it ends (SIGKILL, the OOM killer), so a RUNNING trial whose file can be locked has no
process left: :func:`retry_killed` fails it and queues it again with the same values at once. A
trial whose file is locked (a live process: another command on the same study, a Ray worker) or is
not on this disk (a trial on another machine) is left to Optuna's heartbeat. Optuna alone (its
heartbeat, and rl-zoo3 or Ray Tune on top of it) can only fail a trial once its grace period has
passed: a study resumed sooner leaves the trial RUNNING and fills without it.

**Checkpoints.** A finished trial's ``ckpt/`` is removed unless it is the best trial so far
(:func:`keep_best_checkpoints`), called once the study has recorded the trial, so the best's
checkpoint is replaced only after the better trial is stored.
"""

from __future__ import annotations

import fcntl
import math
import os
import shutil
import socket
import uuid
from types import TracebackType
from typing import TYPE_CHECKING, Callable, Iterable, List, Optional, Type

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial

#: the user attribute of a trial naming its worker's lock file: ``{"trial": number, "lock": path}``
#: (the trial's number too: a retry inherits its failed trial's attributes)
LOCK_ATTR = "stride_worker_lock"


def workers_dir(out_dir: str) -> str:
    """The folder of the lock files of the processes running trials of the study in ``out_dir``."""
    return os.path.join(out_dir, "workers")


class WorkerLock:
    """A process running trials: an exclusive ``flock`` on its own file under ``<out>/workers/``,
    held until :meth:`release` (or the process's end, however it ends)."""

    def __init__(self, out_dir: str) -> None:
        folder = workers_dir(out_dir)
        os.makedirs(folder, exist_ok=True)
        name = f"{socket.gethostname()}_{os.getpid()}_{uuid.uuid4().hex[:8]}.lock"
        self.path = os.path.join(folder, name)
        hidden = os.path.join(folder, f".{name}")  # locked before it takes its name: never seen unheld
        self._fd: Optional[int] = os.open(hidden, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: nobody else holds it
        os.rename(hidden, self.path)

    def release(self) -> None:
        """Remove the file and drop the lock (its trials are told by now)."""
        if self._fd is None:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> "WorkerLock":
        return self

    def __exit__(self, kind: Optional[Type[BaseException]], error: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.release()


def mark_trial(trial: "optuna.Trial", lock: WorkerLock) -> None:
    """Record on a running Optuna trial that the holder of ``lock`` runs it (its lock is held: a
    resumer that reads the mark finds the lock taken for as long as this process lives)."""
    trial.set_user_attr(LOCK_ATTR, {"trial": trial.number, "lock": lock.path})


def _gone(path: str) -> bool:
    """Whether the lock file at ``path`` exists here and nobody holds it (its process has ended)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:  # absent (removed, or on another machine's disk): not for us to judge
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held: its process lives
        return False
    finally:
        os.close(fd)
    return True


def retry_killed(study: "optuna.Study", out_dir: str,
                 retry: Callable[["optuna.Study", "FrozenTrial"], None]) -> List[int]:
    """Fail each RUNNING trial of ``study`` whose worker is gone and hand it to ``retry`` (Optuna's
    ``RetryHeartbeatStaleTrialCallback``: the same values queued, the retry counted); then remove
    the lock files under ``<out>/workers/`` of processes that have ended. Returns the trials failed."""
    import optuna
    from optuna.trial import TrialState

    failed: List[int] = []
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        mark = trial.user_attrs.get(LOCK_ATTR)
        if not (isinstance(mark, dict) and mark.get("trial") == trial.number and _gone(str(mark.get("lock")))):
            continue
        try:
            study.tell(trial.number, state=TrialState.FAIL)
        except (ValueError, optuna.exceptions.UpdateFinishedTrialError):  # finished meanwhile (another resumer)
            continue
        retry(study, next(t for t in study.get_trials(deepcopy=True) if t.number == trial.number))
        failed.append(trial.number)
    folder = workers_dir(out_dir)
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.startswith(".") or not name.endswith(".lock"):
            continue
        path = os.path.join(folder, name)
        if _gone(path):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    return failed


def keep_best_checkpoints(run_dirs: Callable[[int], Iterable[str]], study: "optuna.Study") -> None:
    """Remove ``ckpt/`` from the run folders (``run_dirs(number)``) of every finished trial but the
    best complete one; running trials keep theirs."""
    from optuna.trial import TrialState

    finished = [t for t in study.get_trials(deepcopy=False) if t.state.is_finished()]
    done = [t for t in finished if t.state == TrialState.COMPLETE]
    best = min(done, key=lambda t: math.inf if t.value is None else t.value).number if done else None
    for trial in finished:
        if trial.number != best:
            for run in run_dirs(trial.number):
                shutil.rmtree(os.path.join(run, "ckpt"), ignore_errors=True)
