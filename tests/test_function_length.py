"""No function in ``stride/`` is over 60 lines (issue 30): a long function is split into named steps
that read top to bottom. A function's length runs from its ``def`` line to its last line, docstring
included, decorators not; nested functions count inside their parent and on their own."""

from __future__ import annotations

import ast
import os
from typing import Iterator, List, Tuple

#: the most lines a function may have
MAX_LINES = 60


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def functions(tree: ast.AST, prefix: str = "") -> Iterator[Tuple[str, int, int]]:
    """(qualified name, first line, length in lines) of every function under ``tree``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + node.name
            yield name, node.lineno, (node.end_lineno or node.lineno) - node.lineno + 1
            yield from functions(node, name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, prefix + node.name + ".")
        else:
            yield from functions(node, prefix)


def long_functions(root: str, max_lines: int = MAX_LINES) -> List[Tuple[str, int, str, int]]:
    """(path relative to the checkout, line, qualified name, length) of each function in the
    ``stride`` package under ``root`` that is over ``max_lines`` lines."""
    out = []
    for folder, _, files in os.walk(os.path.join(root, "stride")):
        for file in sorted(files):
            if file.endswith(".py"):
                path = os.path.join(folder, file)
                with open(path, encoding="utf-8") as f:
                    tree = ast.parse(f.read(), path)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                out += [(rel, line, name, n) for name, line, n in functions(tree) if n > max_lines]
    return sorted(out)


def test_no_function_is_over_60_lines():
    offenders = [f"{path}:{line} {name} ({n} lines)" for path, line, name, n in long_functions(_ROOT)]
    assert not offenders, f"functions over {MAX_LINES} lines (split them into named steps):\n" + "\n".join(offenders)


def test_the_check_finds_a_long_method(tmp_path):
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "stride").mkdir()
    (tmp_path / "stride" / "m.py").write_text(f"class A:\n    def f(self):\n{body}\n\n    def g(self):\n        pass\n")
    assert long_functions(str(tmp_path)) == [("stride/m.py", 2, "A.f", MAX_LINES + 1)]
