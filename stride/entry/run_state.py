"""What a run records about itself beside its checkpoints, so that ``--resume`` finishes the run
that was started: the mode that made it and its step / iteration limits (``run.json``, written when
it starts) and whether it already ended (``result.json``, written when it ends; ``interrupted`` when
a signal stopped it).

A resume by another mode than the run's is refused in one line before anything is read further or
written (:func:`check_resume_mode`): the entries' loops, checkpoints and files differ, and a serial
loop on a league run would train it as something else and overwrite its ``result.json``. The serial
entries (``-m serial``, ``serial_onpolicy``, ``serial_reward_model``) are one pipeline
(:func:`stride.entry.serial_pipeline`; the variants only check the config when a run starts), so
they record :data:`SERIAL` and any of them resumes a run made by any. A run made before modes were
recorded is recognised by its files (:func:`run_mode`).

DI-engine and SB3 resume from a checkpoint only: the limits given on the first command are lost
(a resumed run trains forever or needs them retyped), and resuming a finished run trains again.
"""

from __future__ import annotations

import json
import os
import shlex
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..utils.errors import ConfigError
from ..utils.files import atomic_write_json

RUN_FILE = "run.json"
#: the modes that make a run folder, as ``run.json`` records them (the ``-m`` that resumes it)
SERIAL, OFFLINE, LEAGUE, PARALLEL, DIST = "serial", "offline", "league", "parallel", "dist"
#: the ``-m`` modes that run each recorded mode's pipeline (so may resume its runs)
RESUMED_BY = {SERIAL: ("serial", "serial_onpolicy", "serial_reward_model"), OFFLINE: ("offline",),
              LEAGUE: ("league",), PARALLEL: ("parallel",), DIST: ("dist",)}
RESULT_FILE = "result.json"
#: exit codes of an interrupted run, by signal (128 + the signal's number, as a shell reports them)
EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143}


def record_run(exp_dir: str, mode: str, max_env_step: Optional[int], max_train_iter: Optional[int],
               workers: int = 1) -> None:
    """Record a new run in ``<exp>/run.json``: the mode that made it (one of :data:`RESUMED_BY`;
    ``workers``: a league's collector actors) and its limits (None: no limit)."""
    if mode not in RESUMED_BY:
        raise ValueError(f"unknown run mode {mode!r}; valid choices: {', '.join(RESUMED_BY)}")
    record: Dict[str, object] = {"mode": mode, "max_env_step": max_env_step, "max_train_iter": max_train_iter}
    if mode == LEAGUE:
        record["workers"] = workers
    atomic_write_json(os.path.join(exp_dir, RUN_FILE), record)


def write_limits(exp_dir: str, max_env_step: Optional[int], max_train_iter: Optional[int]) -> None:
    """Record new limits (None: no limit) of a resumed run in ``<exp>/run.json``; the rest of the
    record (its mode) stays."""
    _update_run(exp_dir, {"max_env_step": max_env_step, "max_train_iter": max_train_iter})


def write_workers(exp_dir: str, workers: int) -> None:
    """Record a league run's new number of collector actors (resumed with another ``--workers``)."""
    _update_run(exp_dir, {"workers": workers})


def _update_run(exp_dir: str, fields: Mapping[str, object]) -> None:
    path = os.path.join(exp_dir, RUN_FILE)
    record = _read_json(path) if os.path.isfile(path) else {}
    record.update(fields)
    atomic_write_json(path, record)


def run_mode(exp_dir: str) -> Tuple[Optional[str], int]:
    """``(mode, workers)`` of the run in ``exp_dir``: as ``run.json`` records it, else (a run made
    before modes were recorded) as its files show: a ``league`` section in ``total_config.json``
    -> league (``system_config.json``'s ``collector_num`` workers: a run on Ray), else a
    ``system_config.json`` -> parallel (``-m dist`` writes the same files), else
    ``policy.offline`` -> offline; otherwise None: serial or offline, which its files do not tell
    apart (an offline run of a policy that is not offline-only), so either may resume it."""
    path = os.path.join(exp_dir, RUN_FILE)
    record = _read_json(path) if os.path.isfile(path) else {}
    mode = record.get("mode")
    if mode is not None:
        if mode not in RESUMED_BY:
            raise ConfigError(f"'{path}' records an unknown mode {mode!r}; valid choices: {', '.join(RESUMED_BY)}")
        workers = record.get("workers", 1)
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ConfigError(f"'{path}' holds an invalid workers {workers!r} (a positive integer)")
        return str(mode), workers
    config_path = os.path.join(exp_dir, "total_config.json")
    cfg = _read_json(config_path) if os.path.isfile(config_path) else {}
    system_path = os.path.join(exp_dir, "system_config.json")
    system = _read_json(system_path) if os.path.isfile(system_path) else None
    if cfg.get("league"):
        count = (system or {}).get("collector_num", 1)
        return LEAGUE, count if isinstance(count, int) and not isinstance(count, bool) and count >= 1 else 1
    if system is not None:
        return PARALLEL, 1
    policy = cfg.get("policy")
    if isinstance(policy, dict) and policy.get("offline"):
        return OFFLINE, 1
    return None, 1


def check_resume_mode(exp_dir: str, mode: str) -> None:
    """Refuse, in one line naming the command that resumes it, to resume the run in ``exp_dir``
    with ``-m mode`` when another mode made it (nothing is written: call it first)."""
    made_by, workers = run_mode(exp_dir)
    if made_by is None:  # a run from before modes were recorded that its files do not place
        if mode in RESUMED_BY[SERIAL] + RESUMED_BY[OFFLINE]:
            return
        raise ConfigError(f"'{exp_dir}' is a -m serial or -m offline run, not a -m {mode} run: resume it with: "
                          f"{resume_command(SERIAL, exp_dir, None, None)} (or -m offline)")
    if mode in RESUMED_BY[made_by]:
        return
    what = f"a -m {made_by} run" + (f" with --workers {workers}" if workers > 1 else "")
    raise ConfigError(f"'{exp_dir}' is {what}, not a -m {mode} run: resume it with: "
                      f"{resume_command(made_by, exp_dir, None, None)}")


def read_limits(exp_dir: str) -> Tuple[Optional[int], Optional[int]]:
    """``(max_env_step, max_train_iter)`` recorded when the run started (None: none or no record)."""
    path = os.path.join(exp_dir, RUN_FILE)
    if not os.path.isfile(path):
        return None, None
    data = _read_json(path)
    return _limit(data.get("max_env_step"), path), _limit(data.get("max_train_iter"), path)


def read_system_config(exp_dir: str) -> Dict[str, object]:
    """The ``system_config`` a run on Ray saved (``<exp>/system_config.json``): what its resume runs on."""
    return _read_json(os.path.join(exp_dir, "system_config.json"))


def read_result(exp_dir: str) -> Optional[Dict[str, object]]:
    """The run's ``result.json`` (None while it has none)."""
    path = os.path.join(exp_dir, RESULT_FILE)
    return _read_json(path) if os.path.isfile(path) else None


def finished(result: Optional[Mapping[str, object]], max_env_step: Optional[int], max_train_iter: Optional[int]) -> bool:
    """Whether a run that wrote ``result`` has nothing left to do under these limits: it was not
    interrupted and it reached the stop value, or a limit at least as far as the ones given."""
    if result is None or result.get("interrupted"):
        return False
    if result.get("stop"):
        return True
    return ((max_env_step is not None and _count(result, "env_step") >= max_env_step)
            or (max_train_iter is not None and _count(result, "train_iter") >= max_train_iter))


def _count(result: Mapping[str, object], key: str) -> float:
    """A step or iteration count of a ``result.json`` (0 where it has none)."""
    value = result.get(key, 0)
    if not isinstance(value, (int, float)):
        raise ConfigError(f"a run's result holds an invalid {key} {value!r} (a number)")
    return value


def resume_command(mode: str, exp_dir: str, max_env_step: Optional[int], max_train_iter: Optional[int]) -> str:
    """The command line that continues this run, shell-quoted (paths with spaces work). ``-m dist``
    resumes with ``--module coordinator`` (its learner and collectors start again as they were
    started), except the run of its short form (every role the driver's), a parallel one."""
    module = ["--module", "coordinator"] if mode == DIST and run_mode(exp_dir)[0] != PARALLEL else []
    argv: List[str] = ["stride", "-m", mode, *module, "--resume", exp_dir]
    if max_env_step is not None:
        argv += ["--env-step", str(max_env_step)]
    if max_train_iter is not None:
        argv += ["--train-iter", str(max_train_iter)]
    return shlex.join(argv)


def eval_command(exp_dir: str) -> str:
    """The command line that evaluates this run's latest checkpoint, shell-quoted."""
    return shlex.join(["stride", "-m", "eval", "--load", exp_dir])


def interrupted_note(mode: str, exp_dir: str, max_env_step: Optional[int], max_train_iter: Optional[int]) -> str:
    """What an interrupted run of ``-m mode`` tells the user to run next: its resume command (every
    training mode resumes its runs) -- a command that runs as printed, never one the CLI would refuse."""
    return f"resume with: {resume_command(mode, exp_dir, max_env_step, max_train_iter)}"


def _read_json(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ConfigError(f"'{path}' is not valid JSON (truncated or hand-edited?)") from None
    if not isinstance(data, dict):
        raise ConfigError(f"'{path}' does not hold a JSON object")
    return data


def _limit(value: Any, path: str) -> Optional[int]:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"'{path}' holds an invalid limit {value!r} (a positive integer or null)")
    return value
