"""Packaging: the wheel ships ``py.typed``; dependencies are bounded on both sides and the tested set satisfies them."""

from __future__ import annotations

import os
import re
import tomllib

import pytest
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


def test_every_extra_is_bounded_and_pinned():
    pins = _pins()
    for extra, deps in _pyproject()["project"]["optional-dependencies"].items():
        for req in map(Requirement, deps):
            ops = {s.operator for s in req.specifier}
            assert ">=" in ops and "<" in ops, f"[{extra}] {req} needs a lower and an upper bound"
            pinned = pins.get(req.name.lower())
            assert pinned is not None and pinned in req.specifier, f"[{extra}] {req}: constraints.txt pins {pinned}"


# What a fresh virtualenv with one extra alone lacked for its README command (issue 28): Gymnasium's
# pygame renderer for videos of CartPole, the Pillow that minari's hdf5 storage imports without
# declaring it, the PettingZoo that every league game is, and the pygame its board games import.
@pytest.mark.parametrize("extra, needs", [
    ("video", "gymnasium[classic-control]"), ("minari", "pillow"), ("league", "pettingzoo"), ("league", "pygame-ce"),
    ("multiagent", "pygame-ce"),
])
def test_an_extra_alone_brings_what_its_readme_command_needs(extra, needs):
    deps = [Requirement(d) for d in _pyproject()["project"]["optional-dependencies"][extra]]
    want = Requirement(needs)
    assert any(d.name == want.name and want.extras <= d.extras for d in deps), f"[{extra}] lacks {needs}: {deps}"


def test_every_extra_but_box2d_and_docs_is_part_of_the_test_extra():
    """docs/install.md says so, and CI's tests of each family rely on it ([docs] builds the site: CI
    installs it in a step of its own)."""
    extras = _pyproject()["project"]["optional-dependencies"]
    test = [Requirement(d) for d in extras["test"]]
    for extra, deps in extras.items():
        if extra in ("test", "box2d", "docs"):
            continue
        for req in map(Requirement, deps):
            assert any(t.name == req.name and req.extras <= t.extras for t in test), f"[{extra}] {req} is not in [test]"
