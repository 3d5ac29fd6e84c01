"""Errors a user can cause. The command line prints them as one line, without a traceback."""

from __future__ import annotations

import difflib
from typing import Iterable


class StrideError(Exception):
    """Base class of user-facing errors: the message alone must tell what to fix. The ``stride``
    command prints it as one line and exits with ``exit_code`` (2: bad usage or input)."""

    exit_code = 2


class ResourceError(StrideError, OSError):
    """The machine refused something the run needs (disk full, read-only folder, permissions):
    nothing wrong with the command itself, so the ``stride`` command exits with 1."""

    exit_code = 1


def resource_error(action: str, path: str, error: OSError) -> StrideError:
    """One line for an ``OSError`` met while ``action`` on ``path``: a ``ResourceError`` (exit 1)
    for the machine's refusals, a ``ConfigError`` (exit 2) for a name the file system cannot hold."""
    import errno

    text = " ".join(str(error).split())  # an OSError without strerror (a library's own, h5py's): its message
    reason = error.strerror or (f"{type(error).__name__}: {text}" if text else type(error).__name__)
    if error.errno == errno.ENAMETOOLONG:
        return ConfigError(f"cannot {action} '{path}': {reason} (choose a shorter experiment name)")
    hint = {errno.ENOSPC: " (free some disk space)", errno.EROFS: " (run from a writable folder)",
            errno.EACCES: " (run from a folder you may write to)", errno.EDQUOT: " (disk quota exceeded)"}
    return ResourceError(f"cannot {action} '{path}': {reason}{hint.get(error.errno or 0, '')}")


class ConfigError(StrideError, ValueError):
    """A config value or key is wrong (unknown key, missing required key, bad type)."""


class UnknownNameError(ConfigError, KeyError):
    """A name (env, policy, buffer, ...) is not registered."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class InvalidActionError(StrideError, ValueError):
    """An action given to an environment lies outside its action space."""


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The valid choice closest to a mistyped ``name``, or None if nothing is close."""
    found = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_name_message(kind: str, name: str, choices: Iterable[str]) -> str:
    """``unknown policy 'dqm' (did you mean 'dqn'?); valid choices: dqn, ppo``."""
    choices = sorted(str(c) for c in choices)
    hint = closest(name, choices)
    did_you_mean = f" (did you mean '{hint}'?)" if hint else ""
    return f"unknown {kind} '{name}'{did_you_mean}; valid choices: {', '.join(choices)}"
