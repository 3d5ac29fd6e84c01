"""Packaging: the wheel ships ``py.typed``; dependencies are bounded on both sides and the tested set satisfies them."""

from __future__ import annotations

import os
import re
import tomllib

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pyproject() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _pins() -> dict:
    pins = {}
    with open(os.path.join(ROOT, "constraints.txt")) as f:
        for line in f:
            m = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line.strip())
            if m:
                pins[m.group(1).lower().replace("_", "-")] = Version(m.group(2))
    return pins


def test_py_typed_ships():
    project = _pyproject()
    assert os.path.isfile(os.path.join(ROOT, "stride", "py.typed"))
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["stride"]


def test_dependencies_have_both_bounds_and_the_tested_set_fits_them():
    project = _pyproject()["project"]
    pins = _pins()
    reqs = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]]
    for req in reqs:
        ops = {s.operator for s in req.specifier}
        assert ">=" in ops and "<" in ops, f"{req} needs a lower and an upper bound"
        pinned = pins.get(req.name.lower())
        assert pinned is not None, f"{req.name} is not pinned in constraints.txt"
        assert pinned in req.specifier, f"constraints.txt pins {req.name}=={pinned}, outside {req.specifier}"
