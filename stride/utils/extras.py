"""Optional dependencies: one import path that turns a missing extra into one line.

Env families and tools that need a heavy package (ale-py, mujoco, minatar, minigrid, pettingzoo,
ray, ...) import it through :func:`import_extra`, so a user without the package reads the one
command that installs it (:func:`install_hint`) instead of a ``ModuleNotFoundError`` traceback.
"""

from __future__ import annotations

import importlib
import shlex
import sys
from pathlib import Path
from types import ModuleType
from typing import Optional

from .errors import StrideError


class MissingExtraError(StrideError, ImportError):
    """A module of an optional extra is not installed (the ``stride`` command exits with 1)."""

    exit_code = 1


def checkout_root() -> Optional[Path]:
    """The source checkout this ``stride`` package runs from (the folder of its ``pyproject.toml``), or
    None for an installed release."""
    root = Path(__file__).resolve().parents[2]  # stride/utils/extras.py -> the folder above the package
    pyproject = root / "pyproject.toml"
    return root if pyproject.is_file() and 'name = "stride-rl"' in pyproject.read_text() else None


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` into the environment running Stride, as the user can paste it.

    Stride is installed from a checkout (``pip install -e .``, the README's commands) until it is on
    PyPI, where ``pip install "stride-rl[atari]"`` finds nothing; and a plain ``pip`` may not be the
    virtualenv's (the README runs ``.venv/bin/stride`` without activating it). So the hint names this
    interpreter and, from a checkout, the checkout with its tested pins::

        /home/u/stride/.venv/bin/python -m pip install -c /home/u/stride/constraints.txt -e '/home/u/stride[atari]'

    and ``python -m pip install 'stride-rl[atari]'`` for an installed release.
    """
    python = shlex.quote(sys.executable)
    root = checkout_root()
    if root is not None:
        pins = root / "constraints.txt"
        constraints = f"-c {shlex.quote(str(pins))} " if pins.is_file() else ""
        return f"{python} -m pip install {constraints}-e {shlex.quote(f'{root}[{extra}]')}"
    return f"{python} -m pip install {shlex.quote(f'stride-rl[{extra}]')}"


def import_extra(module: str, extra: str, what: str = "") -> ModuleType:
    """``importlib.import_module(module)``, or a :class:`MissingExtraError` naming the extra.

    ``what`` says what needs it (``"Atari envs"``); the message is one line with
    :func:`install_hint`'s command::

        Atari envs need ale_py: /home/u/stride/.venv/bin/python -m pip install -c ... -e '/home/u/stride[atari]'
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        missing = e.name or module
        if missing != module and not module.startswith(missing + "."):
            raise  # the extra is there but one of its own dependencies is broken: show the real error
        need = f"{what} need {module}" if what else f"{module} is not installed"
        raise MissingExtraError(f"{need}: {install_hint(extra)}") from None
