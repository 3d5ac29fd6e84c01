"""Where the parallel pipeline's actors run: a local Ray instance on 127.0.0.1, or a running cluster.

``local_ray()`` starts ``ray start --head --block`` under :mod:`.watchdog`, so the instance dies
with the pipeline however the pipeline ends (SIGKILL included), and connects the driver to it.
Every listener binds 127.0.0.1 (checked with ``ss -ltnp``; see the package docstring for the list):
the node IP is 127.0.0.1 (Ray maps a loopback node IP to the host's address unless
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, its single-machine setting), the dashboard is off, usage
stats are off, and token authentication is on with a fresh random token per run, held in the
environment of the instance and the driver only (never written to disk). RLlib and a bare
``ray.init()`` bind the GCS, raylet and workers to every interface with a token kept in
``~/.ray/auth_token`` (Ray 2.60).
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from typing import IO, Dict, Iterator, Optional

from ...utils.errors import StrideError

#: seconds to wait for a local instance to accept the driver
START_TIMEOUT = 120.0

DIST_HINT = "install the extra: pip install 'stride-rl[dist]'"


def require_ray() -> None:
    """Nothing when Ray is installed, else one line saying how to install it (Ray is not imported:
    :func:`local_ray` sets its environment first)."""
    if importlib.util.find_spec("ray") is None:
        raise StrideError(f"-m parallel needs Ray, which is not installed; {DIST_HINT}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray_cli() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "ray")
    found = here if os.path.isfile(here) else shutil.which("ray")
    if not found:
        raise StrideError(f"the 'ray' command is not installed next to {sys.executable}; {DIST_HINT}")
    return found


def loopback_env(token: str) -> Dict[str, str]:
    """The environment variables that keep a one-machine instance on 127.0.0.1 and authenticated."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token, "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


@contextlib.contextmanager
def local_ray(num_cpus: Optional[int] = None) -> Iterator[Dict[str, object]]:
    """Start a local instance, connect the driver, yield facts about it (``address``,
    ``start_seconds``, ``temp_dir``); on exit disconnect and stop the instance, remove its files."""
    t0 = time.perf_counter()
    if "ray" in sys.modules and os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") != "0":
        raise StrideError("ray was imported before the parallel pipeline started (it then reads its settings and "
                          "would bind the host's address): set RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 before importing "
                          "ray, or give system_config.address of a running cluster")
    temp_dir = tempfile.mkdtemp(prefix="stride-ray-")  # short: Ray's socket paths must fit 107 bytes
    token, port = secrets.token_hex(32), _free_port()
    env = loopback_env(token)
    cmd = [_ray_cli(), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
           "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp_dir}",
           "--dashboard-agent-listen-port=0", f"--ray-client-server-port={_free_port()}"]  # no fixed ports: runs side by side
    if num_cpus is not None:
        cmd.append(f"--num-cpus={num_cpus}")
    log_path = os.path.join(temp_dir, "ray_start.log")
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the driver's own Ray client reads them
    # the watchdog removes temp_dir once Ray has stopped (also after a SIGKILLed driver); this open
    # handle keeps the start-up output readable for an error message
    log = open(log_path, "w+b")
    guard = subprocess.Popen([sys.executable, "-m", "stride.entry.parallel.watchdog", "--remove", temp_dir, "--", *cmd],
                             stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                             env={**os.environ, **env}, start_new_session=True)  # Ctrl-C reaches the driver only
    connected = False
    try:
        require_ray()
        import ray

        address = f"127.0.0.1:{port}"
        _connect(address, guard, log)
        connected = True
        yield {"address": address, "start_seconds": time.perf_counter() - t0, "temp_dir": temp_dir,
               "watchdog_pid": guard.pid}
    finally:
        if connected:
            ray.shutdown()
        if guard.stdin is not None:
            guard.stdin.close()  # the watchdog stops the instance
        try:
            guard.wait(60)
        except subprocess.TimeoutExpired:
            guard.kill()
            guard.wait()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        log.close()
        shutil.rmtree(temp_dir, ignore_errors=True)  # (the watchdog's job; here too when it was killed)


def _connect(address: str, guard: "subprocess.Popen[bytes]", log: IO[bytes]) -> None:
    import ray

    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if guard.poll() is not None:
            raise StrideError(f"the local Ray instance failed to start (exit code {guard.returncode}); "
                              f"its output: {_tail(log)}")
        try:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
            return
        except ConnectionError:
            if time.monotonic() > deadline:
                raise StrideError(f"the local Ray instance at {address} did not answer within {START_TIMEOUT:.0f} s; "
                                  f"its output: {_tail(log)}") from None
            time.sleep(0.5)


def _tail(log: IO[bytes], lines: int = 3) -> str:
    log.flush()
    log.seek(0)
    text = log.read().decode(errors="replace").strip().splitlines()
    return " | ".join(line.strip() for line in text[-lines:]) or "(none)"


def check_address(address: str) -> None:
    """Fail with one line when nothing listens at ``address`` (Ray's own connect would retry it for
    a long time)."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except (OSError, ValueError):
        raise StrideError(f"nothing answers at system_config.address={address!r}; valid choices: the 'HOST:PORT' of "
                          "a running Ray cluster's head (ray start --head --port=PORT), or None for a local "
                          "instance") from None


@contextlib.contextmanager
def joined_ray(address: str, namespace: Optional[str] = None) -> Iterator[Dict[str, object]]:
    """Connect to a running cluster at ``address`` (its token from the environment, as Ray reads it),
    in ``namespace`` (``-m dist``: one per experiment, where its roles' named actors live)."""
    t0 = time.perf_counter()
    require_ray()
    check_address(address)
    import ray

    try:
        ray.init(address=address, namespace=namespace, logging_level=logging.ERROR, log_to_driver=False)
    except ConnectionError as e:
        raise StrideError(f"cannot join the Ray cluster at {address!r}: {' '.join(str(e).split())}") from None
    try:
        yield {"address": address, "start_seconds": time.perf_counter() - t0, "temp_dir": None, "watchdog_pid": None}
    finally:
        ray.shutdown()
