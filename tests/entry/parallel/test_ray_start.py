"""The local Ray instance's start-up (``stride.entry.parallel.cluster.local_ray``), with real processes:
a ``ray start`` that hangs is stopped at the start-up limit, or at once on SIGINT / SIGTERM, with one
line, its exit code, no experiment folder and none of its processes left. (That the minimal Ray of
``stride-rl[dist]`` alone starts is ``tools/check_extra.sh``'s check, in a fresh virtualenv.)

The fault is injected into the real ``ray`` command through a ``sitecustomize`` module on
``PYTHONPATH`` (Python imports it at the start of every process): ``ray start`` hangs after it
started a stand-in for Ray's GCS that ignores SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

pytest.importorskip("ray")

from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as par  # noqa: E402

import stride  # noqa: E402
from tests.entry.stride_process import STRIDE  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(stride.__file__)))  # the checkout the test runs
MARKER = "stride-test-hung-gcs-stand-in"

HANG = f'''
import os, signal, subprocess, sys, time
if os.path.basename(sys.argv[0]) == "ray" and sys.argv[1:2] == ["start"]:
    subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                      "time.sleep(600)", "{MARKER}", os.environ["TMPDIR"]])  # (this test's tmp_path: _env)
    print("ray start: hanging (test fault)", flush=True)
    time.sleep(600)
    sys.exit(0)
'''


def _env(tmp_path, site: str, **extra: str):
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "sitecustomize.py").write_text(site)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    return {**env, "PYTHONPATH": os.pathsep.join([str(site_dir), ROOT]), "TMPDIR": str(tmp_path), **extra}


def _cfg(tmp_path) -> str:
    path = tmp_path / "cfg.py"
    path.write_text(f"main_config = {par.main_config!r}\ncreate_config = {par.create_config!r}\n"
                    f"system_config = {dict(par.system_config, num_cpus=2)!r}\n")
    return str(path)


def _ours(tmp_path, cmd: str) -> bool:
    """Whether ``cmd`` is a process of this test's run (the stand-in names the test's tmp_path: other
    runs of these tests on the machine, another checkout's say, have stand-ins of their own)."""
    return str(tmp_path) in cmd


def _leftovers(tmp_path):
    procs = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if _ours(tmp_path, cmd):
            procs.append(cmd[:80] + ("..." if MARKER in cmd else ""))
    temp = [p.name for p in tmp_path.iterdir() if p.name.startswith("stride-ray-")]
    return procs, temp


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("mode", ["parallel", "league"])
def test_a_ray_start_that_hangs_is_stopped_at_the_limit(tmp_path, mode):
    env = _env(tmp_path, HANG, STRIDE_RAY_START_TIMEOUT="4")
    exp = tmp_path / "exp"
    if mode == "parallel":
        args = ["-m", "parallel", "-c", _cfg(tmp_path)]
    else:
        pytest.importorskip("pettingzoo")
        args = ["-m", "league", "-c", os.path.join(ROOT, "stride/zoo/pettingzoo/config/tictactoe_league_config.py"),
                "--workers", "2"]
    # the old code waited on the GCS for ever (the timeout catches that); the line below says the limit
    # fired (no wall-clock bound on the run: under load, Python's start alone takes tens of seconds)
    out = subprocess.run([*STRIDE, *args, "--exp-name", str(exp), "--env-step", "200",
                          "--no-progress"], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr[-2000:]
    line = _one_line(out.stderr)
    assert line.startswith("stride: error: the local Ray instance did not start within 4 s") and \
        "ray start: hanging (test fault)" in line
    assert not exp.exists()  # nothing was run: no experiment folder
    assert _leftovers(tmp_path) == ([], [])


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_the_start_stops_it_at_once(tmp_path, sig, code):
    env = _env(tmp_path, HANG)
    exp = tmp_path / "exp"
    proc = subprocess.Popen([*STRIDE, "-m", "parallel", "-c", _cfg(tmp_path), "--exp-name",
                             str(exp), "--env-step", "200", "--no-progress"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while not any(MARKER in cmd and _ours(tmp_path, cmd)
                      for cmd in (" ".join(p.info["cmdline"] or []) for p in psutil.process_iter(["cmdline"]))):
            assert proc.poll() is None and time.monotonic() < deadline, "ray start never began"
            time.sleep(0.2)
        time.sleep(0.5)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=45)  # at once: well before the 120 s start-up limit
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, err[-2000:]
    assert _one_line(err) == (f"stride: error: interrupted ({sig.name}) while the local Ray instance was starting; "
                              "it was stopped and nothing was trained")
    assert not exp.exists()
    assert _leftovers(tmp_path) == ([], [])
