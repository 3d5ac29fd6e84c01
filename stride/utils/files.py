"""Files written whole or not at all: ``atomic_write`` (a temporary file beside the target, renamed
over it). A full disk, a read-only folder or an interrupt never leaves a half-written config,
checkpoint or result behind, and never a stray ``.tmp`` file either: the temporary is removed
when writing it fails, and the error propagates."""

from __future__ import annotations

import json
import os
from typing import IO, Any, Callable, Optional

from .errors import resource_error


def atomic_write(path: str, write: Callable[[IO[Any]], None], binary: bool = False) -> None:
    """Call ``write(f)`` on a temporary file next to ``path``, then rename it to ``path``. When the
    machine refuses the write (an ``OSError``, also one that a writer such as ``torch.save``
    re-raised as another exception), a one-line :class:`~stride.utils.errors.ResourceError`
    naming ``path`` is raised instead."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb" if binary else "w") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        refused = _os_error_in(e)
        if refused is not None:
            raise resource_error("write", path, refused) from e
        raise


def _os_error_in(error: BaseException) -> Optional[OSError]:
    """The ``OSError`` behind ``error`` (itself, or what it was raised from or during), if any."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, OSError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return None


def atomic_write_text(path: str, text: str) -> None:
    """``path`` holds ``text``, or is left as it was."""

    def write(f: IO[str]) -> None:
        f.write(text)

    atomic_write(path, write)


def atomic_write_json(path: str, obj: object) -> None:
    """``path`` holds ``obj`` as indented JSON, or is left as it was."""
    atomic_write_text(path, json.dumps(obj, indent=2) + "\n")
