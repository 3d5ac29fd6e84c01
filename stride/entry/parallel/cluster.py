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

A local instance also gets Ray settings that keep Ray's own memory flat in a long run
(:data:`LOCAL_RAY_SETTINGS`: no task events, a bounded record of dead actors; a variable of the same
name in the environment wins); a cluster the user started keeps the settings it was started with.

Ray's own logs never reach the user's terminal: the driver's native (C++) lines, which Ray's
GCS client writes to the process's stderr before its log files exist (``gcs_client.cc: Failed to
get cluster ID ... InvalidAuthToken``, repeated for 20 s, on a wrong token), go to
``<run>/log/ray/<process>.err`` (:func:`native_lines`: Ray has no setting for them, so the
process's file descriptor 2 points there while Ray runs, and Python's ``sys.stderr`` -- Stride's
lines -- stays on the terminal), and a local instance's logs (``ray start``'s output, every Ray
process's and actor's log files) are kept in ``<run>/log/ray/`` when it stops (the watchdog's
``--keep-logs``, so also after a SIGKILLed driver). A joined cluster's nodes keep their logs in
their own temp folders, as ``ray start`` made them.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import math
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import IO, Dict, Iterator, List, Optional

from ...utils.errors import ConfigError, ResourceError, StrideError
from ...utils.extras import MissingExtraError, install_hint

#: seconds to wait for a local instance to start and accept the driver (the environment variable
#: ``STRIDE_RAY_START_TIMEOUT`` overrides it: a slow machine, or a test of the limit)
START_TIMEOUT = 120.0
#: what ``ray start`` prints once its head node (GCS and raylet) is up and registered (Ray 2.60)
READY_LINE = "Ray runtime started."
#: seconds the watchdog may take to stop an instance that never came up before it is killed
FAILED_START_GRACE = 10.0
#: the actors' niceness on a local instance: Ray starts its workers at 15 (``RAY_worker_niceness``,
#: so a shared cluster's daemons stay responsive), where any other work of the machine at the usual
#: 0 gets ~30x their CPU; on one machine the actors are the run (the zoo IMPALA test, 40 s alone,
#: took 300-590 s at load 8-33 with its actors at 15, past pytest's 300 s; 290 s at load 28-37 at 0).
#: A ``RAY_worker_niceness`` in the environment wins.
WORKER_NICENESS = "0"
#: Ray's settings for the local instance Stride starts (:func:`local_settings`; a variable of the same
#: name in the environment wins; a cluster the user started, ``system_config.address`` or ``-m dist``,
#: keeps its own). Each bounds what Ray itself keeps in memory over a long run (the 20-minute soak,
#: benchmarks/parallel/soak.py, saw Ray's own RSS grow ~20-35 MiB/min with Ray's defaults, all of it
#: in the GCS server; the raylet stayed flat):
LOCAL_RAY_SETTINGS: Dict[str, str] = {
    "RAY_worker_niceness": WORKER_NICENESS,
    # 0: no task events. Ray's default (1000 ms) has every worker report each task's status changes
    # to the GCS, which keeps them for the dashboard and the state API (``ray list tasks``, the
    # timeline) up to 100,000 tasks (``RAY_task_events_max_num_task_in_gcs``): the pipeline runs
    # ~100 small actor tasks a second, so the GCS grew by their events until that cap (~0.5-1 GB).
    # Stride's instance has no dashboard and Stride reads no task state; a task's failure still
    # reaches its caller as an exception. Also spares each worker its event buffer and its reports.
    "RAY_task_events_report_interval_ms": "0",
    # dead actors whose records the GCS keeps (Ray's default 100,000): a killed or crashed collector
    # is replaced by a new actor, and its record (its creation task, arguments included) was kept for
    # ``ray list actors``; 1,000 bounds a run that loses a collector a minute for days. Stride never
    # looks a dead actor up: its callers learn of its death when it dies, and it is replaced.
    "RAY_maximum_gcs_destroyed_actor_cached_count": "1000",
}
#: where in a run's folder Ray's logs go (:func:`native_lines`, :func:`local_ray`)
RAY_LOG_DIR = os.path.join("log", "ray")
#: what Ray's GCS client logs when the cluster refuses this process's token (Ray 2.60)
BAD_TOKEN = "InvalidAuthToken"
#: the name of the thread that runs ``ray.init`` (:func:`connect_driver`)
CONNECT_THREAD = "stride-ray-connect"

@contextlib.contextmanager
def native_lines(run_dir: Optional[str], name: str) -> Iterator[Optional[str]]:
    """While Ray runs in this process: its native lines (file descriptor 2) go to a file, which is
    kept as ``<run_dir>/log/ray/<name>.err`` when ``run_dir`` exists at the end (a run that never
    opened its folder leaves none: then the file goes); Python's ``sys.stderr`` stays on the
    terminal, so Stride's own lines are the only ones there. Yields the file's path while it is
    written (None: ``run_dir`` None, nothing redirected). A connect still running at the end (one
    given up at its deadline: its thread lives on until the process exits) keeps descriptor 2 on
    the file, so its retries never reach the terminal."""
    if run_dir is None:
        yield None
        return
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    fd, path = tempfile.mkstemp(prefix="stride-ray-native-", suffix=".err")
    saved = os.dup(2)
    terminal: Optional[IO[str]] = None
    swap = _is_fd2(sys.stderr)
    old_stderr = sys.stderr
    if swap:  # Python's stderr onto a copy of the terminal's descriptor, before fd 2 moves
        terminal = os.fdopen(os.dup(saved), "w", buffering=1, encoding=sys.stderr.encoding,
                             errors="backslashreplace")
        sys.stderr = terminal
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield path
    finally:
        pending = any(t.name == CONNECT_THREAD and t.is_alive() for t in threading.enumerate())
        if not pending:
            if terminal is not None:
                terminal.flush()
                sys.stderr = old_stderr
                terminal.close()
            os.dup2(saved, 2)
        os.close(saved)
        _keep(path, run_dir, f"{name}.err")


def _is_fd2(stream: object) -> bool:
    """Whether ``stream`` writes to file descriptor 2 (not a test's capture, say)."""
    fileno = getattr(stream, "fileno", None)
    try:
        return callable(fileno) and fileno() == 2
    except (OSError, ValueError):  # io.UnsupportedOperation is a ValueError and an OSError
        return False


def _keep(path: str, run_dir: str, name: str) -> None:
    """Move the file ``path`` to ``<run_dir>/log/ray/<name>`` (appended to one there) when the run's
    folder exists; else remove it."""
    try:
        if os.path.isdir(run_dir) and os.path.getsize(path):
            dest = os.path.join(run_dir, RAY_LOG_DIR)
            os.makedirs(dest, exist_ok=True)
            with open(path, "rb") as src, open(os.path.join(dest, name), "ab") as out:
                shutil.copyfileobj(src, out)
        os.remove(path)
    except OSError:
        pass


def bad_token(path: Optional[str]) -> bool:
    """Whether Ray's native lines in ``path`` (:func:`native_lines`) say the cluster refused this
    process's token."""
    if path is None:
        return False
    try:
        with open(path, "rb") as f:
            return BAD_TOKEN.encode() in f.read()
    except OSError:
        return False


def require_ray() -> None:
    """Nothing when Ray is installed, else one line saying how to install it (Ray is not imported:
    :func:`local_ray` sets its environment first)."""
    if importlib.util.find_spec("ray") is None:
        raise MissingExtraError(f"runs on Ray need ray: {install_hint('dist')}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ray_cli() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "ray")
    found = here if os.path.isfile(here) else shutil.which("ray")
    if not found:
        raise MissingExtraError(f"the 'ray' command is not installed next to {sys.executable}: {install_hint('dist')}")
    return found


def loopback_env(token: str) -> Dict[str, str]:
    """The environment variables that keep a one-machine instance on 127.0.0.1 and authenticated."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token, "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def local_settings() -> Dict[str, str]:
    """:data:`LOCAL_RAY_SETTINGS`, each overridden by an environment variable of the same name."""
    return {name: os.environ.get(name, value) for name, value in LOCAL_RAY_SETTINGS.items()}


def start_timeout() -> float:
    """Seconds a local instance may take to start: ``STRIDE_RAY_START_TIMEOUT`` or :data:`START_TIMEOUT`."""
    raw = os.environ.get("STRIDE_RAY_START_TIMEOUT")
    if raw is None:
        return START_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"STRIDE_RAY_START_TIMEOUT={raw!r} is not a number of seconds > 0 (the local Ray "
                          f"instance's start-up limit; default {START_TIMEOUT:g})")
    return value


class RayStartError(ResourceError):
    """The local instance did not start (in time, or at all): nothing ran; exit code 1."""


class StartInterrupted(RayStartError):
    """SIGINT / SIGTERM while the local instance was starting: nothing ran yet, so nothing is saved;
    the exit code is the shell's for that signal (130 / 143)."""

    def __init__(self, signum: int, what: str = "the local Ray instance was starting; it was stopped") -> None:
        name = signal.Signals(signum).name
        super().__init__(f"interrupted ({name}) while {what} and nothing was trained")
        self.exit_code = 128 + signum


@contextlib.contextmanager
def _startup_signals(what: Optional[str] = None) -> Iterator[None]:
    """While Ray starts (or is joined: ``what``), SIGINT and SIGTERM end it at once
    (:class:`StartInterrupted`)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum: int, frame: object) -> None:
        raise StartInterrupted(signum) if what is None else StartInterrupted(signum, what)

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _ray_client_port_args() -> List[str]:
    """``--ray-client-server-port`` at a free port where Ray starts its client server (Ray does when
    grpcio is installed, on the fixed port 10001 unless told); none where it cannot (the minimal
    Ray of ``stride-rl[dist]``: asking for the port there makes ``ray start`` fail). Stride never uses
    the client server: the driver joins the GCS directly."""
    if importlib.util.find_spec("grpc") is None:  # (what Ray checks before it starts its client server)
        return []
    return [f"--ray-client-server-port={_free_port()}"]


@contextlib.contextmanager
def local_ray(num_cpus: Optional[int] = None, run_dir: Optional[str] = None) -> Iterator[Dict[str, object]]:
    """Start a local instance, connect the driver, yield facts about it (``address``,
    ``start_seconds``, ``temp_dir``); on exit disconnect and stop the instance, remove its files
    (its logs kept in ``<run_dir>/log/ray/`` when that folder exists by then: the run opened it;
    the driver's native lines there too, :func:`native_lines`).

    The start is bounded: an instance not up within :func:`start_timeout` seconds, one that dies
    while starting, or a SIGINT / SIGTERM meanwhile is stopped (every process of it) and reported in
    one line. The driver only calls ``ray.init`` once ``ray start`` said its head is up: before,
    ``ray.init`` retries the GCS in C++ without end and without seeing signals."""
    t0 = time.perf_counter()
    _check_ray_not_imported()
    require_ray()
    timeout = start_timeout()
    temp_dir = tempfile.mkdtemp(prefix="stride-ray-")  # short: Ray's socket paths must fit 107 bytes
    token, port = secrets.token_hex(32), _free_port()
    env = {**local_settings(), **loopback_env(token)}
    cmd = _head_command(port, temp_dir, num_cpus)
    log_path = os.path.join(temp_dir, "ray_start.log")
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the driver's own Ray client reads them
    # the watchdog removes temp_dir once Ray has stopped (also after a SIGKILLed driver); this open
    # handle keeps the start-up output readable for an error message
    log = open(log_path, "w+b")
    connected = started = False
    guard: Optional["subprocess.Popen[bytes]"] = None
    keep = [] if run_dir is None else ["--keep-logs", os.path.abspath(run_dir)]
    with native_lines(run_dir, "driver"):  # Ray's native lines (starting, stopping) into the run's folder
        try:
            # before the start-up's signal handlers: their exception in the middle of ``import ray``
            # left a half-imported Ray, whose exit handler then printed a traceback under the one line
            import ray

            with _startup_signals():
                guard = subprocess.Popen([sys.executable, "-m", "stride.entry.parallel.watchdog", "--remove",
                                          temp_dir, *keep, "--", *cmd], stdin=subprocess.PIPE, stdout=log,
                                         stderr=subprocess.STDOUT, env={**os.environ, **env},
                                         start_new_session=True)  # Ctrl-C reaches the driver only
                address = f"127.0.0.1:{port}"
                deadline = time.monotonic() + timeout
                _wait_until_up(address, guard, log, deadline)
                if not connect_driver(address, None, deadline):
                    raise RayStartError(f"the local Ray instance started but did not accept the driver within "
                                        f"{timeout:g} s (set STRIDE_RAY_START_TIMEOUT for a slower machine); it was "
                                        "stopped")
                connected = started = True
            yield {"address": address, "start_seconds": time.perf_counter() - t0, "temp_dir": temp_dir,
                   "watchdog_pid": guard.pid}
        finally:
            if connected:
                ray.shutdown()
            if guard is not None:
                _stop_watchdog(guard, 60.0 if started else FAILED_START_GRACE)
            _restore_env(saved)
            log.close()
            shutil.rmtree(temp_dir, ignore_errors=True)  # (the watchdog's job; here too when it was killed)


def _check_ray_not_imported() -> None:
    """A driver that imported ray before it set up the loopback settings would bind the host's address."""
    if "ray" in sys.modules and os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") != "0":
        raise StrideError("ray was imported before the parallel pipeline started (it then reads its settings and "
                          "would bind the host's address): set RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 before importing "
                          "ray, or give system_config.address of a running cluster")


def _head_command(port: int, temp_dir: str, num_cpus: Optional[int]) -> List[str]:
    """``ray start`` of a local head on 127.0.0.1 (no fixed ports but ``port``: runs side by side)."""
    cmd = [_ray_cli(), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
           "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp_dir}",
           "--dashboard-agent-listen-port=0", *_ray_client_port_args()]
    return cmd + ([f"--num-cpus={num_cpus}"] if num_cpus is not None else [])


def _restore_env(saved: Dict[str, Optional[str]]) -> None:
    """The environment variables as they were before (None: unset)."""
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _stop_watchdog(guard: "subprocess.Popen[bytes]", grace: float) -> None:
    """Close the watchdog's pipe (it stops the instance); past ``grace`` seconds, kill the watchdog
    and every process of its session (the instance's: it runs in the session the watchdog leads)."""
    from .watchdog import end_session

    if guard.stdin is not None:
        guard.stdin.close()  # the watchdog stops the instance
    try:
        guard.wait(grace)
    except subprocess.TimeoutExpired:
        guard.kill()
        guard.wait()
    end_session(guard.pid)  # anything the instance left (nothing, when ray start stopped it all)


def _wait_until_up(address: str, guard: "subprocess.Popen[bytes]", log: IO[bytes], deadline: float) -> None:
    """Return once ``ray start`` reports its head node up and its GCS accepts connections; one line
    when the instance dies first or at ``deadline`` (``time.monotonic()``)."""
    timeout = start_timeout()
    host, _, port = address.rpartition(":")
    while True:
        if guard.poll() is not None:
            raise RayStartError(f"the local Ray instance failed to start (exit code {guard.returncode}); "
                              f"its output: {_tail(log)}")
        if READY_LINE in _text(log):
            try:
                socket.create_connection((host, int(port)), timeout=1.0).close()
                return
            except OSError:
                pass
        if time.monotonic() > deadline:
            raise RayStartError(f"the local Ray instance did not start within {timeout:g} s (set "
                                f"STRIDE_RAY_START_TIMEOUT for a slower machine); it was stopped; its output: "
                                f"{_tail(log)}")
        time.sleep(0.2)


def _text(log: IO[bytes]) -> str:
    log.flush()
    log.seek(0)
    return log.read().decode(errors="replace")


def _tail(log: IO[bytes], lines: int = 3) -> str:
    text = _text(log).strip().splitlines()
    return " | ".join(line.strip() for line in text[-lines:]) or "(none)"


def check_address(address: str, timeout: float = 10.0) -> None:
    """Fail with one line when nothing listens at ``address`` (Ray's own connect would retry it for
    a long time)."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=max(0.1, timeout)).close()
    except (OSError, ValueError):
        raise StrideError(f"nothing answers at system_config.address={address!r}; valid choices: the 'HOST:PORT' of "
                          "a running Ray cluster's head (ray start --head --port=PORT), or None for a local "
                          "instance") from None


#: the host names Ray 2.60 rewrites to the machine's outward address when it joins a cluster
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def _outward_ip() -> str:
    """The address this machine reaches the network from (where Ray rewrites a loopback address to;
    no packet is sent), 127.0.0.1 when it has no route."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("8.8.8.8", 80))
            return str(s.getsockname()[0])
        except OSError:
            return "127.0.0.1"


def keep_loopback(address: str) -> None:
    """Before Ray is imported: when ``address`` is a loopback head that listens on loopback only
    (``ray start --head --node-ip-address=127.0.0.1``), set ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``,
    without which Ray rewrites the address to the machine's outward one, where nothing listens,
    and retries it without end. A head that also listens on the outward address is left to Ray."""
    host, _, port = address.rpartition(":")
    if host.strip("[]") not in LOOPBACK_HOSTS or os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") == "0":
        return
    outward = _outward_ip()
    if not outward.startswith("127."):
        try:
            socket.create_connection((outward, int(port)), timeout=2.0).close()
            return  # Ray's rewrite reaches it
        except (OSError, ValueError):
            pass
    if "ray" in sys.modules:
        raise StrideError(f"ray was imported before joining the loopback head {address} (it then reads its settings "
                          "and would rewrite the address to this machine's outward one): set "
                          "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 before importing ray")
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"


def connect_driver(address: str, namespace: Optional[str], deadline: float, native: Optional[str] = None) -> bool:
    """``ray.init(address=...)`` that gives up at ``deadline`` (``time.monotonic()``); False then;
    one line at once when Ray's native lines (``native``: :func:`native_lines`' file) say the
    cluster refused this process's token (Ray itself retries it for 20 s, then says only
    "Failed to connect").

    Ray's connect retries an unreachable GCS in C++ without end and without running Python's signal
    handlers, so it runs in a helper thread while this one waits: the wait is bounded and Ctrl-C /
    SIGTERM are seen. A connect abandoned this way ends with the process (its thread is a daemon)."""
    import ray

    done = threading.Event()
    failure: List[BaseException] = []

    def connect() -> None:
        try:
            ray.init(address=address, namespace=namespace, logging_level=logging.ERROR, log_to_driver=False)
        except BaseException as e:  # handed to the waiting thread
            failure.append(e)
        finally:
            done.set()

    threading.Thread(target=connect, name=CONNECT_THREAD, daemon=True).start()
    while not done.wait(0.2):
        if bad_token(native):
            raise StrideError(f"the Ray cluster at {address} refused this process's auth token ({BAD_TOKEN}): give "
                              "the head's token (RAY_AUTH_TOKEN, or RAY_AUTH_TOKEN_PATH to a file holding it; on the "
                              "head: ray get-auth-token)")
        if time.monotonic() > deadline:
            return False
    if failure:
        raise failure[0]
    return True


@contextlib.contextmanager
def joined_ray(address: str, namespace: Optional[str] = None, deadline: Optional[float] = None,
               wait: float = START_TIMEOUT, run_dir: Optional[str] = None,
               name: str = "driver") -> Iterator[Dict[str, object]]:
    """Connect to a running cluster at ``address`` (its token from the environment, as Ray reads it),
    in ``namespace`` (``-m dist``: one per experiment, where its roles' named actors live), by
    ``deadline`` (``time.monotonic()``; default ``wait`` s from now): else one line, exit 1. Ray's
    native lines go to ``<run_dir>/log/ray/<name>.err`` (:func:`native_lines`), never the terminal."""
    t0 = time.perf_counter()
    limit = time.monotonic() + wait if deadline is None else deadline
    require_ray()
    check_address(address, min(10.0, limit - time.monotonic()))
    keep_loopback(address)
    import ray

    with native_lines(run_dir, name) as native:
        try:
            with _startup_signals(f"joining the Ray cluster at {address}; nothing joined"):
                connected = connect_driver(address, namespace, limit, native)
        except ConnectionError as e:
            why = f"{e}" + (f" ({e.__cause__})" if e.__cause__ is not None else "")
            raise StrideError(f"cannot join the Ray cluster at {address!r}: {' '.join(why.split())[:400]}") from None
        if not connected:
            raise ResourceError(f"could not connect to the Ray cluster at {address} within {wait:g} s (--wait), so "
                                "nothing joined: is it a Ray head of this Ray version, started with token auth and "
                                "this process's token?")
        try:
            yield {"address": address, "start_seconds": time.perf_counter() - t0, "temp_dir": None,
                   "watchdog_pid": None}
        finally:
            ray.shutdown()
