"""Errors a user can cause. The command line prints them as one line, without a traceback."""

from __future__ import annotations

import difflib
from typing import Iterable


class StrideError(Exception):
    """Base class of user-facing errors: the message alone must tell what to fix."""


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
