"""``stride.envs`` and ``stride.testing`` touch no private attribute of another object, class or
library, and import no private name from another module (``self._x`` / ``cls._x`` / ``super()._x``
on one's own class are fine; ``os._exit`` is the os module's documented API)."""

from __future__ import annotations

import ast
import pathlib
from typing import List

import stride.envs
import stride.testing

ALLOWED = {("os", "_exit")}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _findings(path: pathlib.Path) -> List[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = node.value
            if isinstance(owner, ast.Name) and (owner.id in ("self", "cls") or (owner.id, node.attr) in ALLOWED):
                continue
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
                continue
            out.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            module = "." * node.level + (node.module or "")
            out.extend(f"{path.name}:{node.lineno} from {module} import {a.name}" for a in node.names if _private(a.name))
    return out


def test_no_private_access_to_other_objects_or_libraries() -> None:
    roots = [pathlib.Path(stride.envs.__file__).parent, pathlib.Path(stride.testing.__file__).parent]
    findings = [f for root in roots for path in sorted(root.rglob("*.py")) for f in _findings(path)]
    assert findings == []


def test_the_check_sees_what_it_forbids(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from .pool import _Worker\nrng = env.unwrapped._np_random\nok = self._x\nos._exit(1)\n")
    assert _findings(bad) == ["bad.py:1 from .pool import _Worker", "bad.py:2 env.unwrapped._np_random"]
