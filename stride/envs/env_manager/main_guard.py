"""Scripts that start worker processes without ``if __name__ == "__main__":``.

With the ``forkserver`` and ``spawn`` start methods, multiprocessing runs the main script again in
every new process (as ``__mp_main__``) before the process does its work. A script whose top level
starts a run without the guard therefore starts the run again in every worker: each makes its own
experiment folder and tries to start its own workers, which multiprocessing refuses with a long
RuntimeError per child (on 8b5a9af: 9 tracebacks and 9 stray experiment folders for a zoo config
run that way). Stride looks before it starts the first worker: if the call comes from the main
script's top level outside the guard, the launch stops with one line saying what to add.
(DI-engine, SB3 and Gymnasium let multiprocessing's RuntimeError happen in each child.)
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import sys
import tokenize
from typing import Optional, Tuple


def _is_main_test(test: ast.expr) -> Optional[bool]:
    """True for ``__name__ == "__main__"``, False for ``!=`` (either operand order), None otherwise."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return None
    operands = [test.left, test.comparators[0]]
    names = [o for o in operands if isinstance(o, ast.Name) and o.id == "__name__"]
    consts = [o for o in operands if isinstance(o, ast.Constant) and o.value == "__main__"]
    if not (names and consts):
        return None
    return isinstance(test.ops[0], ast.Eq)


@functools.lru_cache(maxsize=8)
def _guarded_ranges(path: str, mtime: float) -> Optional[Tuple[Tuple[int, int], ...]]:
    """Line ranges of the script's ``if __name__ == "__main__":`` blocks (None: no readable source)."""
    try:
        with tokenize.open(path) as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None
    ranges = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            kind = _is_main_test(node.test)
            body = node.body if kind else node.orelse if kind is False else []
            if body:
                ranges.append((body[0].lineno, body[-1].end_lineno or body[-1].lineno))
    return tuple(ranges)


def _rerun_in_children() -> Optional[str]:
    """The main script's path if multiprocessing would run it again in a child, else None
    (the rules of ``multiprocessing.spawn.get_preparation_data`` and ``_fixup_main_*``)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None:  # an interactive session, python -c
        return None
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None:  # python -m pkg.mod: run again unless it is a package's __main__
        return None if name == "__main__" or name.endswith(".__main__") else path
    return None if os.path.splitext(os.path.basename(path))[0] == "ipython" else path


def unguarded_main_line() -> Optional[Tuple[str, int]]:
    """``(script, line)`` when the current call comes from the main script's top level outside
    its ``if __name__ == "__main__":`` block (and worker processes would run the script again),
    else None. Unknown (no source) counts as guarded."""
    path = _rerun_in_children()
    if path is None:
        return None
    main_globals = vars(sys.modules["__main__"])
    frame = inspect.currentframe()
    while frame is not None and not (frame.f_globals is main_globals and frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    if frame is None:  # not called from the script's top level (a thread, a callback, ...)
        return None
    line = frame.f_lineno
    del frame
    try:
        ranges = _guarded_ranges(path, os.path.getmtime(path))
    except OSError:
        return None
    if ranges is None or any(lo <= line <= hi for lo, hi in ranges):
        return None
    return path, line
