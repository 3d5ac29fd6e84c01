"""What a run records about itself beside its checkpoints, so that ``--resume`` finishes the run
that was started: its step / iteration limits (``run.json``, written when it starts) and whether
it already ended (``result.json``, written when it ends; ``interrupted`` when a signal stopped it).

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
RESULT_FILE = "result.json"
#: exit codes of an interrupted run, by signal (128 + the signal's number, as a shell reports them)
EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143}


def write_limits(exp_dir: str, max_env_step: Optional[int], max_train_iter: Optional[int]) -> None:
    """Record the run's limits (None: no limit) in ``<exp>/run.json``."""
    atomic_write_json(os.path.join(exp_dir, RUN_FILE), {"max_env_step": max_env_step, "max_train_iter": max_train_iter})


def read_limits(exp_dir: str) -> Tuple[Optional[int], Optional[int]]:
    """``(max_env_step, max_train_iter)`` recorded when the run started (None: none or no record)."""
    path = os.path.join(exp_dir, RUN_FILE)
    if not os.path.isfile(path):
        return None, None
    data = _read_json(path)
    return _limit(data.get("max_env_step"), path), _limit(data.get("max_train_iter"), path)


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
    """The command line that continues this run, shell-quoted (paths with spaces work)."""
    argv: List[str] = ["stride", "-m", mode, "--resume", exp_dir]
    if max_env_step is not None:
        argv += ["--env-step", str(max_env_step)]
    if max_train_iter is not None:
        argv += ["--train-iter", str(max_train_iter)]
    return shlex.join(argv)


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
