"""Ray's native lines (``stride.entry.parallel.cluster.native_lines``): what a process writes to its
file descriptor 2 while Ray runs goes to the run folder's ``log/ray/``, Stride's own lines (Python's
``sys.stderr``) stay on the terminal. Real processes (file descriptors are the process's); no Ray.
And the Ray settings of the local instance Stride starts (``local_settings``)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from stride.entry.parallel.cluster import LOCAL_RAY_SETTINGS, local_settings

CODE = """
import os, sys
from stride.entry.parallel.cluster import native_lines
with native_lines(sys.argv[1], "driver") as path:
    os.write(2, b"gcs_client.cc:210: a native line\\n")  # as Ray's C++ writes it
    print("stride: a line of Stride's", file=sys.stderr, flush=True)
print("stride: after", file=sys.stderr, flush=True)
os.write(2, b"fd 2 is the terminal again\\n")
"""


def _run(run_dir, tmp_path) -> subprocess.CompletedProcess:
    (tmp_path / "tmp").mkdir()
    return subprocess.run([sys.executable, "-c", CODE, str(run_dir)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})


def test_native_lines_go_to_the_run_folder_and_strides_stay_on_the_terminal(tmp_path):
    out = _run(tmp_path, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stderr == "stride: a line of Stride's\nstride: after\nfd 2 is the terminal again\n"
    assert (tmp_path / "log" / "ray" / "driver.err").read_text() == "gcs_client.cc:210: a native line\n"
    assert os.listdir(tmp_path / "tmp") == []  # the temporary file moved into the run folder


def test_a_run_folder_that_was_never_made_gets_nothing(tmp_path):
    """(``-m parallel``: a Ray that did not start leaves no experiment folder, not even for its logs.)"""
    out = _run(tmp_path / "exp", tmp_path)
    assert out.returncode == 0 and "a native line" not in out.stderr, out.stderr
    assert not (tmp_path / "exp").exists() and os.listdir(tmp_path / "tmp") == []


def test_the_local_instances_ray_settings_exist_in_this_ray_and_the_environment_wins(monkeypatch):
    """Ray ignores a ``RAY_<name>`` it does not know: each setting must name a config entry of the
    installed Ray (its ``RAY_CONFIG`` names are strings in ``_raylet.so``), or a Ray upgrade that
    renamed it would silently bring the GCS's growth back (benchmarks/parallel/soak.py)."""
    spec = importlib.util.find_spec("ray")  # the [test] extra brings Ray: a missing one fails here
    assert spec is not None and spec.origin is not None, "Ray is not installed (pip install -e '.[test]')"
    with open(os.path.join(os.path.dirname(spec.origin), "_raylet.so"), "rb") as f:
        names = set(f.read().split(b"\0"))
    assert [k for k in LOCAL_RAY_SETTINGS if k.removeprefix("RAY_").encode() not in names] == []
    for name in LOCAL_RAY_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    assert local_settings() == LOCAL_RAY_SETTINGS and LOCAL_RAY_SETTINGS["RAY_task_events_report_interval_ms"] == "0"
    monkeypatch.setenv("RAY_task_events_report_interval_ms", "1000")  # the user's own choice wins
    assert local_settings()["RAY_task_events_report_interval_ms"] == "1000"


def test_without_ray_a_run_on_ray_stops_with_the_missing_extras_line(monkeypatch):
    """``-m parallel``, ``-m dist``, ``--workers`` without Ray: the missing-extra line and its exit code
    (1), naming the command that installs the ``dist`` extra, not a usage error."""
    from stride.entry.parallel.cluster import require_ray
    from stride.utils.extras import MissingExtraError, install_hint

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else find_spec(name, *a))
    with pytest.raises(MissingExtraError) as e:
        require_ray()
    assert str(e.value) == f"runs on Ray need ray: {install_hint('dist')}" and e.value.exit_code == 1
