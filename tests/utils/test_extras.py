import shlex
import sys
from pathlib import Path

import pytest

import stride.utils.extras as extras
from stride.utils.extras import MissingExtraError, import_extra, install_hint

ROOT = Path(__file__).resolve().parents[2]


def test_present_module_is_returned():
    import json

    assert import_extra("json", "none") is json


def test_missing_module_names_the_extra_in_one_line():
    with pytest.raises(MissingExtraError) as e:
        import_extra("stride_no_such_pkg.sub", "atari", what="Atari envs")
    msg = str(e.value)
    assert msg == f"Atari envs need stride_no_such_pkg.sub: {install_hint('atari')}"
    assert "\n" not in msg and e.value.exit_code == 1


def test_a_broken_dependency_of_a_present_module_is_not_masked(tmp_path, monkeypatch):
    (tmp_path / "stride_fake_extra.py").write_text("import stride_missing_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="stride_missing_dependency_xyz"):
        import_extra("stride_fake_extra", "fake")


def test_without_what_the_line_names_the_module():
    with pytest.raises(MissingExtraError) as e:
        import_extra("stride_no_such_pkg", "x")
    assert str(e.value) == f"stride_no_such_pkg is not installed: {install_hint('x')}"


def test_from_a_checkout_the_hint_installs_the_checkout_with_its_pins_into_this_interpreter():
    """Stride is not on PyPI: ``pip install "stride-rl[atari]"`` finds nothing, and a bare ``pip`` may
    not be the virtualenv's that runs Stride (the README calls ``.venv/bin/stride`` unactivated)."""
    assert extras.checkout_root() == ROOT  # the tests run from a checkout
    argv = shlex.split(install_hint("atari"))
    assert argv == [sys.executable, "-m", "pip", "install", "-c", str(ROOT / "constraints.txt"), "-e", f"{ROOT}[atari]"]


def test_an_installed_release_is_hinted_by_its_name(monkeypatch):
    monkeypatch.setattr(extras, "checkout_root", lambda: None)
    assert shlex.split(install_hint("mujoco")) == [sys.executable, "-m", "pip", "install", "stride-rl[mujoco]"]
