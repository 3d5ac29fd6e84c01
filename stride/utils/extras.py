"""Optional dependencies: one import path that turns a missing extra into one line.

Env families and tools that need a heavy package (ale-py, mujoco, minatar, minigrid, pettingzoo,
ray, ...) import it through :func:`import_extra`, so a user without the package reads which
``pip install "stride-rl[...]"`` provides it instead of a ``ModuleNotFoundError`` traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import StrideError


class MissingExtraError(StrideError, ImportError):
    """A module of an optional extra is not installed (the ``stride`` command exits with 1)."""

    exit_code = 1


def import_extra(module: str, extra: str, what: str = "") -> ModuleType:
    """``importlib.import_module(module)``, or a :class:`MissingExtraError` naming the extra.

    ``what`` says what needs it (``"Atari envs"``); the message is one line::

        Atari envs need ale_py: pip install "stride-rl[atari]"
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        missing = e.name or module
        if missing != module and not module.startswith(missing + "."):
            raise  # the extra is there but one of its own dependencies is broken: show the real error
        need = f"{what} need {module}" if what else f"{module} is not installed"
        raise MissingExtraError(f'{need}: pip install "stride-rl[{extra}]"') from None
