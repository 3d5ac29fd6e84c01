"""``stride -m dist``: the data file, the SLURM lines, the one-line refusals, and a run on a loopback
two-node Ray cluster (head + worker node, token auth) with the seeds' ``--module`` commands; on a
loopback head (slow): elastic collectors, an on-policy run, and interrupted runs resumed by the
commands they printed."""

from __future__ import annotations

import copy
import csv
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import psutil
import pytest

from stride.entry.cli import main
from stride.entry.parallel import dist
from stride.entry.run_state import resume_command
from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as par
from tests.entry.stride_process import STRIDE
from tests.processes import still_alive


def _file(tmp_path, system=None) -> str:
    main = copy.deepcopy(par.main_config)
    main["env"]["stop_value"] = 1e9  # unreachable: a run goes to its --env-step limit (CartPole DQN solves in ~1k)
    path = tmp_path / "cfg.py"
    path.write_text(f"main_config = {main!r}\ncreate_config = {par.create_config!r}\n"
                    f"system_config = {dict(par.system_config, **(system or {}))!r}\n")
    return str(path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_module_config_writes_a_json_data_file_and_the_experiment_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = _file(tmp_path)
    assert main(["-m", "dist", "--module", "config", "-p", "local", "-c", cfg, "-s", "3",
                 "--exp-name", str(tmp_path / "exp"), "--set", "policy.learn.batch_size=32"]) == 0
    out = capsys.readouterr().out
    assert f"dist config written to {cfg}.json" in out
    data = json.loads((tmp_path / "cfg.py.json").read_text())  # JSON, not a pickle
    assert data["format"] == dist.FORMAT and data["seed"] == 3 and data["exp_dir"] == str(tmp_path / "exp")
    assert data["main_config"]["policy"]["learn"]["batch_size"] == 32
    assert (tmp_path / "exp" / "total_config.json").is_file()
    compiled, sys_cfg, _ = dist.read_dist_config(f"{cfg}.json")
    assert compiled.policy.learn.batch_size == 32 and compiled.seed == 3 and sys_cfg.collector_num == 2
    assert dist.namespace_of(compiled) == "stride-exp"


def test_slurm_lines_start_one_ray_node_per_host_and_every_role(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = _file(tmp_path, {"collector_num": 3})
    assert main(["-m", "dist", "--module", "config", "-p", "slurm", "-c", cfg, "--exp-name", str(tmp_path / "exp"),
                 "--address", "10.1.2.3:6379", "--learner-host", "n1", "--collector-host", "n1", "n2"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()[1:]
    assert lines[0].startswith("export RAY_AUTH_MODE=token")
    # the head binds the address it is reached at (not every interface), its token file is the user's only
    assert "(umask 077; ray get-auth-token --generate); ray start --head --node-ip-address=10.1.2.3 --port=6379" in lines[1]
    srun = [line for line in lines if line.startswith("srun")]
    assert len(srun) == 2  # n1 (learner + collector0 + collector2) and n2 (collector1): one Ray node each
    assert "-w n1" in srun[0] and "learner0" in srun[0] and "collector0" in srun[0] and "collector2" in srun[0]
    assert "-w n2" in srun[1] and "collector1" in srun[1] and "ray start --address=10.1.2.3:6379" in srun[1]
    assert lines[-2].endswith("--module coordinator -p local") and lines[-1] == "wait"


def test_module_config_writes_its_data_file_in_the_current_directory(tmp_path, capsys, monkeypatch):
    """A zoo config (inside the installed package) is compiled into ./<name>.json, never next to it."""
    from stride.zoo.cartpole.config import parallel as zoo

    (tmp_path / "run").mkdir()
    monkeypatch.chdir(tmp_path / "run")
    zoo_cfg = os.path.join(os.path.dirname(zoo.__file__), "cartpole_dqn_config.py")
    before = set(os.listdir(os.path.dirname(zoo_cfg)))
    assert main(["-m", "dist", "--module", "config", "-c", zoo_cfg, "--exp-name", str(tmp_path / "exp")]) == 0
    written = tmp_path / "run" / "cartpole_dqn_config.py.json"
    assert f"dist config written to {written}" in capsys.readouterr().out
    assert json.loads(written.read_text())["format"] == dist.FORMAT
    assert set(os.listdir(os.path.dirname(zoo_cfg))) == before  # nothing written into the package


@pytest.mark.parametrize("mode", ["parallel", "dist"])
def test_set_system_config_keys_are_checked_like_the_files(tmp_path, capsys, monkeypatch, mode):
    monkeypatch.chdir(tmp_path)
    cfg = _file(tmp_path)
    module = ["--module", "config"] if mode == "dist" else []
    assert main(["-m", mode, *module, "-c", cfg, "--exp-name", str(tmp_path / "bad"),
                 "--set", "system_config.colector_num=3"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'system_config.collector_num'" in err and err.count("\n") == 1
    assert not (tmp_path / "bad").exists()
    if mode == "dist":  # accepted: recorded in the data file
        assert main(["-m", "dist", "--module", "config", "-c", cfg, "--exp-name", str(tmp_path / "exp"),
                     "--set", "system_config.collector_num=3", "--set", "policy.learn.batch_size=32"]) == 0
        data = json.loads((tmp_path / "cfg.py.json").read_text())
        assert data["system_config"]["collector_num"] == 3 and data["main_config"]["policy"]["learn"]["batch_size"] == 32
    else:  # accepted, then checked against the machine before Ray starts
        assert main(["-m", "parallel", "-c", cfg, "--exp-name", str(tmp_path / "exp"),
                     "--set", "system_config.collector_num=64", "--set", "system_config.collector_cpus=1.0"]) == 2
        assert "asks for 64.5 CPUs" in capsys.readouterr().err


def test_set_system_config_is_refused_where_there_is_none(capsys):
    assert main(["-m", "serial", "-e", "cartpole", "-p", "dqn", "--set", "system_config.collector_num=3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("--set system_config.collector_num: only a parallel config has a system_config; "
                                     "valid choices: -m parallel or -m dist") in err


def test_collector_index_is_the_names_number_else_a_stable_hash():
    assert dist.collector_index("collector7") == 7
    assert dist.collector_index("gpu-box") == dist.collector_index("gpu-box") >= 10_000
    assert dist.collector_index("gpu-box") != dist.collector_index("cpu-box")


@pytest.mark.parametrize("argv, message", [
    (["--module", "lerner", "-c", "x.json"], "unknown --module 'lerner'; valid choices: config, learner, collector, "
                                             "coordinator"),
    (["-p", "k8", "-c", "x.py"], "unknown platform -p 'k8' for -m dist; valid choices: local, slurm, k8s"),
    (["--module", "config"], "-m dist needs -c CONFIG"),
    (["--module", "config", "-c", "x.py.json"], "is a dist data file"),
    (["--module", "coordinator", "-c", "missing.json"], "dist config 'missing.json' does not exist"),
])
def test_usage_errors_are_one_line(argv, message, capsys):
    assert main(["-m", "dist", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_learner_replicas_are_refused_by_the_module_forms(tmp_path, capsys):
    cfg = _file(tmp_path, {"learner_num": 2})
    assert main(["-m", "dist", "--module", "config", "-c", cfg, "--exp-name", str(tmp_path / "exp")]) == 2
    err = capsys.readouterr().err
    assert "system_config.learner_num=2: the --module forms of -m dist run one learner" in err and err.count("\n") == 1
    assert not (tmp_path / "exp").exists() and not (tmp_path / "cfg.py.json").exists()


def _clean_env(**extra: str) -> dict:
    """This environment without Ray's auth/address variables (a fresh process: Ray not yet imported there,
    as in a user's shell -- in the test session Ray may already be imported by other tests)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("RAY_AUTH_MODE", "RAY_USAGE_STATS_ENABLED", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS")}
    return {**env, **extra}


def _stride(args: list, env: dict, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([*STRIDE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_role_errors_are_one_line(tmp_path):
    cfg = _file(tmp_path)
    env = _clean_env()
    assert _stride(["-m", "dist", "--module", "config", "-c", cfg, "--exp-name", str(tmp_path / "exp")], env,
                   tmp_path).returncode == 0
    out = _stride(["-m", "dist", "--module", "collector", "-c", f"{cfg}.json"], env, tmp_path)
    assert out.returncode == 2 and "--module collector needs --module-name NAME" in out.stderr
    out = _stride(["-m", "dist", "--module", "coordinator", "-c", f"{cfg}.json"], env, tmp_path)
    assert out.returncode == 2 and "-m dist needs the Ray cluster's head as HOST:PORT, got None" in out.stderr
    port = _free_port()  # closed again: nothing listens there
    out = _stride(["-m", "dist", "--module", "coordinator", "-c", f"{cfg}.json", "--address", f"127.0.0.1:{port}"],
                  _clean_env(RAY_AUTH_TOKEN="x" * 32), tmp_path)
    assert out.returncode == 2
    assert f"nothing answers at system_config.address='127.0.0.1:{port}'" in out.stderr and out.stderr.count("\n") == 1


def test_no_token_is_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-c", "from stride.entry.parallel import dist; dist.token_auth_env()"],
                         env=_clean_env(RAY_AUTH_TOKEN_PATH=str(tmp_path / "none")), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode != 0 and "no Ray auth token: set RAY_AUTH_TOKEN" in out.stderr


def test_a_token_file_others_can_read_is_refused(tmp_path):
    cfg = _file(tmp_path)
    token = tmp_path / "auth_token"
    token.write_text("ab" * 32)
    token.chmod(0o644)  # what ray get-auth-token --generate writes under the usual umask 022
    env = _clean_env(RAY_AUTH_TOKEN_PATH=str(token))
    assert _stride(["-m", "dist", "--module", "config", "-c", cfg, "--exp-name", str(tmp_path / "exp")], env,
                   tmp_path).returncode == 0
    out = _stride(["-m", "dist", "--module", "coordinator", "-c", f"{cfg}.json", "--address", "127.0.0.1:1"], env,
                  tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert (f"the Ray auth token file {token} is readable by others (mode 0644)" in out.stderr
            and out.stderr.strip().endswith(f"chmod 600 {token}"))
    token.chmod(0o600)  # then it is taken (and the next step fails: nothing listens there)
    out = _stride(["-m", "dist", "--module", "coordinator", "-c", f"{cfg}.json", "--address", "127.0.0.1:1"], env,
                  tmp_path)
    assert out.returncode == 2 and "nothing answers at system_config.address='127.0.0.1:1'" in out.stderr


def _ray_node(env, temp_dir: str, *args: str, log=subprocess.DEVNULL) -> subprocess.Popen:
    ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
    return subprocess.Popen([sys.executable, "-m", "stride.entry.parallel.watchdog", "--", ray_cli, "start", "--block",
                             "--disable-usage-stats", *args],
                            stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True, cwd=temp_dir)


def _raylets(nodes) -> int:
    """How many raylets run under the nodes' watchdogs (a process gone mid-probe, such as one of
    ``ray start``'s short-lived helpers under load, is not counted)."""
    count = 0
    for n in nodes:
        try:
            procs = psutil.Process(n.pid).children(recursive=True)
        except psutil.Error:
            continue
        for p in procs:
            try:
                count += "raylet" in p.name()
            except psutil.Error:
                pass
    return count


def _ray_listeners(nodes, seconds: float = 8.0) -> list:
    """The TCP ports the nodes' processes listen on, once both nodes are up (two raylets)."""
    _wait_for(lambda: _raylets(nodes) == 2, 120, "the worker node's raylet")
    time.sleep(seconds)  # its agents start after the raylet
    found = []
    for p in [p for n in nodes for p in psutil.Process(n.pid).children(recursive=True)]:
        try:
            found += [(c.laddr.ip, c.laddr.port) for c in p.net_connections("tcp") if c.status == psutil.CONN_LISTEN]
        except psutil.Error:
            pass
    return found


def _wait_for(cond, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def test_the_seeds_module_commands_on_a_two_node_loopback_cluster(tmp_path):  # ~95 s: docs/pipelines/ray.md's cluster blocks
    """config, learner, 2 collectors and a coordinator as five processes on a head + worker node;
    a coordinator with no role joined fails after its --wait; then the short form on the same cluster;
    every listener on loopback; every process, node and file is gone at the end."""
    # Ray 2.60 refuses to start a second node under RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 and, without it,
    # rewrites the literal 127.0.0.1 / localhost to the host's address; a host name that resolves to
    # 127.0.0.1 keeps the joining node on loopback (its node IP, seen from there, is 127.0.0.1)
    alias = socket.gethostname()
    assert alias != "localhost" and socket.gethostbyname(alias) == "127.0.0.1", (
        f"this test needs the host name ({alias!r}) to resolve to 127.0.0.1 (an /etc/hosts line), as on the CI machine")
    ray_tmp = tempfile.mkdtemp(prefix="stride-ray-")  # short: Ray's socket paths must fit 107 bytes
    shm_before = set(os.listdir("/dev/shm"))
    port = _free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
           "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    env.pop("RAY_ADDRESS", None)
    address = f"127.0.0.1:{port}"
    nodes = [_ray_node(env, ray_tmp, "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--include-dashboard=false",
                       f"--temp-dir={ray_tmp}", "--num-cpus=1", f"--ray-client-server-port={_free_port()}",
                       "--dashboard-agent-listen-port=0")]
    roles: list = []
    try:
        _wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, 120, "the Ray head")
        nodes.append(_ray_node({**env, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}, ray_tmp, f"--address={alias}:{port}",
                               "--num-cpus=1", "--dashboard-agent-listen-port=0"))
        listeners = _ray_listeners(nodes)
        cfg = _file(tmp_path)
        # the stride processes as the README's recipe runs them: the token exported, nothing else (Ray
        # rewrote 127.0.0.1 unless RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 was set for each: they hung)
        env = {k: v for k, v in env.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
        run = dict(env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        out = subprocess.run([*STRIDE, "-m", "dist", "--module", "config", "-p", "local", "-c", cfg, "-s", "0",
                              "--exp-name", str(tmp_path / "exp"), "--address", address], **run)
        assert out.returncode == 0, out.stderr
        data = f"{cfg}.json"
        early = subprocess.run([*STRIDE, "-m", "dist", "--module", "coordinator", "-p", "local", "-c", data,
                                "--wait", "20", "--no-progress"], **run)  # (the connection counts too)
        assert early.returncode == 1 and early.stderr.count("\n") == 1, early.stderr[-2000:]
        assert "after 20 s, 0 learner(s) and 0 of 2 collector(s) joined namespace stride-exp (none)" in early.stderr
        for module, name in [("learner", "learner0"), ("collector", "collector0"), ("collector", "collector1")]:
            roles.append(subprocess.Popen([*STRIDE, "-m", "dist", "--module", module, "--module-name", name,
                                           "-c", data], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, start_new_session=True))
        for proc in roles:  # each prints one line once its actor is built (placed on a node with room)
            assert "serves in namespace stride-exp" in proc.stdout.readline(), proc.stderr.read()[-2000:]
        coord = subprocess.run([*STRIDE, "-m", "dist", "--module", "coordinator", "-p", "local", "-c", data,
                                "--env-step", "2000", "--no-progress"], **run)
        assert coord.returncode == 0, coord.stderr[-3000:]
        result = json.loads((tmp_path / "exp" / "result.json").read_text())
        assert result["env_step"] >= 2000 and result["batches"] > 0 and result["duplicates"] == 0
        assert result["collector_restarts"] == [] and result["train_iter"] > 0
        for proc in roles:  # the coordinator ended the run: every role process ends by itself
            stdout, stderr = proc.communicate(timeout=60)
            assert proc.returncode == 0, stderr[-2000:]
            assert "ended: killed by the coordinator: the run ended" in stdout, stdout
        short = subprocess.run([*STRIDE, "-m", "dist", "-c", cfg, "-s", "1", "--address", address, "--exp-name",
                                str(tmp_path / "short"), "--env-step", "300", "--no-progress"], **run)
        assert short.returncode == 0, short.stderr[-3000:]  # the short form: every role started by the driver
        assert json.loads((tmp_path / "short" / "result.json").read_text())["env_step"] >= 300
    finally:
        for proc in roles:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
        ray_pids = [p for n in nodes for p in psutil.Process(n.pid).children(recursive=True)]
        for node in reversed(nodes):  # closing the watchdog's stdin stops its node
            node.stdin.close()
            node.wait(120)
        shutil.rmtree(ray_tmp, ignore_errors=True)  # the nodes' logs and sockets
    outside = [(ip, port) for ip, port in listeners if not ip.removeprefix("::ffff:").startswith("127.") and ip != "::1"]
    assert listeners and outside == [], outside  # every listener of both nodes is on loopback
    assert [p.pid for p in still_alive(ray_pids, timeout=0)] == []
    assert set(os.listdir("/dev/shm")) - shm_before == set()


def _compiled_dist_config(tmp_path):
    """``--module config`` run on a config file: (its path, the environment of a token-holding process)."""
    cfg = _file(tmp_path)
    env = _clean_env(RAY_AUTH_TOKEN="x" * 64)
    assert _stride(["-m", "dist", "--module", "config", "-c", cfg, "--exp-name", str(tmp_path / "exp")], env,
                   tmp_path).returncode == 0
    return cfg, env


@pytest.mark.parametrize("module", ["coordinator", "learner"])
def test_wait_bounds_the_connection_to_a_head_that_never_answers(tmp_path, module):
    """A head that accepts TCP but never speaks Ray (a hung GCS, another service on the port): Ray's
    connect retries it without end; ``--wait 3`` ends the joining with one line, exit 1, nothing left."""
    cfg, env = _compiled_dist_config(tmp_path)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)  # accepts (the kernel's backlog) and never answers
        address = f"127.0.0.1:{server.getsockname()[1]}"
        name = ["--module-name", "learner0"] if module == "learner" else []
        proc = subprocess.Popen([*STRIDE, "-m", "dist", "--module", module, *name, "-c", f"{cfg}.json", "--address",
                                 address, "--wait", "3", "--no-progress"], env=env, cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _, err = proc.communicate(timeout=90)  # the old code was still connecting at 150 s; the line below
            # says the --wait fired (no wall-clock bound on the run: under load Python's start takes tens of s)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 1, err[-2000:]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"stride: error: could not connect to the Ray cluster at {address} "
                                                   "within 3 s (--wait), so nothing joined"), err[-2000:]
    assert not psutil.pid_exists(proc.pid)


def test_sigterm_while_connecting_stops_at_once_with_one_line(tmp_path):
    cfg, env = _compiled_dist_config(tmp_path)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        server.settimeout(90)
        address = f"127.0.0.1:{server.getsockname()[1]}"
        proc = subprocess.Popen([*STRIDE, "-m", "dist", "--module", "coordinator", "-c", f"{cfg}.json", "--address",
                                 address, "--wait", "600", "--no-progress"], env=env, cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            peers = [server.accept()[0] for _ in range(3)]  # two address checks, then Ray's connect
            time.sleep(1.0)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
            for peer in peers:
                peer.close()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 143, err[-2000:]
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [f"stride: error: interrupted (SIGTERM) while joining the Ray cluster at {address}; nothing "
                     "joined and nothing was trained"], err[-2000:]


@pytest.fixture(scope="module")
def loopback_head(tmp_path_factory):
    """One loopback Ray head (2 CPUs, token auth) for this module's role tests: ``(address, env)``;
    stopped with every process of it at the end (its watchdog's pipe closed)."""
    ray_tmp = tempfile.mkdtemp(prefix="stride-ray-")
    port = _free_port()
    log = open(tmp_path_factory.mktemp("head") / "ray_start.log", "w+")  # (read back when the head dies early)
    env = {**_clean_env(), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
           "RAY_USAGE_STATS_ENABLED": "0"}
    node = _ray_node({**env, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}, ray_tmp, "--head", "--node-ip-address=127.0.0.1",
                     f"--port={port}", "--include-dashboard=false", f"--temp-dir={ray_tmp}", "--num-cpus=2",
                     f"--ray-client-server-port={_free_port()}", "--dashboard-agent-listen-port=0", log=log)
    try:
        _wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, 120, "the Ray head")
        _wait_for(lambda: "Ray runtime started." in open(log.name).read(), 120, "ray start to report the head up")
        # its raylet registered (a driver joining before that fails to find its node)
        _wait_for(lambda: _raylets([node]) == 1, 120, "the head's raylet")
        time.sleep(5.0)
        assert node.poll() is None, open(log.name).read()[-3000:]
        yield f"127.0.0.1:{port}", env
    finally:
        ray_pids = psutil.Process(node.pid).children(recursive=True)
        node.stdin.close()  # the watchdog stops the node
        node.wait(120)
        log.close()
        shutil.rmtree(ray_tmp, ignore_errors=True)
        assert [p.pid for p in still_alive(ray_pids, timeout=0)] == []


class _Lines:
    """A process's merged stdout and stderr, read line by line in a thread (so a test can wait for a line)."""

    def __init__(self, args: list, env: dict, cwd) -> None:
        import threading

        self.proc = subprocess.Popen([*STRIDE, *args], env=env, cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.lines: list = []
        self._reader = threading.Thread(target=lambda: self.lines.extend(iter(self.proc.stdout.readline, "")),
                                        daemon=True)
        self._reader.start()

    def wait_for(self, text: str, timeout: float = 240) -> str:
        _wait_for(lambda: any(text in line for line in self.lines) or self.proc.poll() is not None, timeout, text)
        found = [line for line in self.lines if text in line]
        assert found, f"{text!r} never came; the output: {''.join(self.lines)[-3000:]}"
        return found[0]

    def end(self, timeout: float = 600) -> str:
        self.proc.wait(timeout)
        self._reader.join(10)
        return "".join(self.lines)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the role's process (its actor dies with it, as it owns it)
            self.proc.wait(30)


# five processes on a loopback head (~1.5 min on an idle 2-core machine, 4-5 under load 30): slow-marked
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_collectors_are_elastic_on_a_loopback_cluster(tmp_path, loopback_head, monkeypatch):
    """collector_num=2 with one collector: the coordinator starts with 1 of 2 at the end of --wait; a
    collector started late joins and its batches are counted; one SIGKILLed mid-run has left, is not
    waited for, and the run reaches its stop."""
    address, env = loopback_head
    monkeypatch.chdir(tmp_path)
    cfg = _file(tmp_path)
    assert main(["-m", "dist", "--module", "config", "-c", cfg, "--exp-name", str(tmp_path / "exp"), "--address",
                 address]) == 0
    data = f"{cfg}.json"
    roles = [_Lines(["-m", "dist", "--module", module, "--module-name", name, "-c", data], env, tmp_path)
             for module, name in [("learner", "learner0"), ("collector", "collector0")]]
    try:
        for role in roles:
            role.wait_for("serves in namespace stride-exp")
        coord = _Lines(["-m", "dist", "--module", "coordinator", "-c", data, "--wait", "20", "--env-step", "3000",
                        "--no-progress"], env, tmp_path)
        roles.append(coord)
        coord.wait_for("1 of 2 collector(s) joined (collector0): starting with them")
        roles.append(_Lines(["-m", "dist", "--module", "collector", "--module-name", "collector1", "-c", data], env,
                            tmp_path))
        coord.wait_for("collector1 joined at env step")
        roles[1].kill()  # collector0, mid-run
        coord.wait_for("collector0 left")
        out = coord.end()
        assert coord.proc.returncode == 0, out[-3000:]
    finally:
        for role in roles:
            role.kill()
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert result["env_step"] >= 3000 and result["duplicates"] == 0
    assert [j["collector"] for j in result["collectors_joined"]] == ["collector1"]
    assert [(c["collector"], c["lost_batches"]) for c in result["collectors_left"]] == [("collector0", 1)]
    by = result["batches_by_collector"]
    assert by["collector0"] > 0 and by["collector1"] > 0 and sum(by.values()) == result["batches"]
    assert result["collector_restarts"] == []  # a joined collector that dies is not replaced
    assert "stride: error" not in out and ".cc:" not in out, out[-3000:]  # no error, no native line of Ray's


@pytest.mark.parametrize("module", ["learner", "coordinator"])
def test_a_wrong_token_is_one_line_and_rays_native_lines_go_to_the_run_folder(tmp_path, loopback_head, module,
                                                                              monkeypatch):
    address, env = loopback_head
    monkeypatch.chdir(tmp_path)
    cfg = _file(tmp_path)
    assert main(["-m", "dist", "--module", "config", "-c", cfg, "--exp-name", str(tmp_path / "exp"), "--address",
                 address]) == 0
    name = ["--module-name", "learner0"] if module == "learner" else []
    out = _stride(["-m", "dist", "--module", module, *name, "-c", f"{cfg}.json", "--no-progress"],
                  {**env, "RAY_AUTH_TOKEN": "0" * 64}, tmp_path)
    assert out.returncode in (1, 2)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"stride: error: the Ray cluster at {address} refused this "
                                                   "process's auth token (InvalidAuthToken)"), out.stderr[-2000:]
    native = tmp_path / "exp" / "log" / "ray" / ("learner-learner0.err" if module == "learner" else "coordinator.err")
    assert "gcs_client" in native.read_text() and "InvalidAuthToken" in native.read_text()


def test_resume_refusals_are_one_line(tmp_path, capsys, monkeypatch):
    """--resume of a run another mode made, or with the data file of another run, or given to a role
    or with a config .py: one line each, naming the bad value and what is taken."""
    monkeypatch.chdir(tmp_path)
    cfg = _file(tmp_path)
    (tmp_path / "other.py").write_text((tmp_path / "cfg.py").read_text())
    for name, exp in (("cfg.py", "run"), ("other.py", "other")):
        assert main(["-m", "dist", "--module", "config", "-c", str(tmp_path / name), "--exp-name", str(tmp_path / exp)]) == 0
    (tmp_path / "run" / "ckpt").mkdir()
    (tmp_path / "run" / "ckpt" / "ckpt_latest.txt").write_text("iteration_0.pth.tar")
    (tmp_path / "run" / "run.json").write_text(json.dumps({"mode": "serial"}))
    cases = [
        (["--module", "coordinator", "--resume", "run"],
         "'run' is a -m serial run, not a -m dist run: resume it with: stride -m serial --resume run"),
        (["--module", "learner", "--module-name", "learner0", "-c", "cfg.py.json", "--resume", "run"],
         "--resume is for --module coordinator (or the short form), not --module learner"),
        (["-c", "cfg.py", "--resume", "run"], "-c 'cfg.py' with --resume: the run goes on with its saved config"),
        (["--module", "coordinator", "-c", "other.py.json", "--resume", "run"],
         f"'other.py.json' is the dist config of the run '{tmp_path / 'other'}', not of '{tmp_path / 'run'}'"),
    ]
    for k, (argv, message) in enumerate(cases):
        if k == len(cases) - 1:
            (tmp_path / "run" / "run.json").write_text(json.dumps({"mode": "dist"}))
        assert main(["-m", "dist", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, (argv, err)
    # the command an interrupted run prints: the coordinator's, or the short form's for its (parallel) run
    assert resume_command("dist", "run", 9, None) == "stride -m dist --module coordinator --resume run --env-step 9"
    (tmp_path / "run" / "run.json").write_text(json.dumps({"mode": "parallel"}))
    assert resume_command("dist", "run", None, None) == "stride -m dist --resume run"


def _ppo_file(tmp_path, eval_freq_envstep: int = 10 ** 6) -> str:
    """CartPole PPO's parallel config (2 collectors) on a tiny budget, never reaching its stop value."""
    from stride.zoo.cartpole.config.parallel import cartpole_ppo_config as ppo

    main = copy.deepcopy(ppo.main_config)
    main["env"].update(stop_value=1e9, n_evaluator_episode=1, evaluator_env_num=1)
    main["policy"]["collect"]["n_sample"] = 64
    main["policy"]["learn"].update(epoch_per_collect=1, batch_size=64)
    main["policy"]["eval"]["evaluator"].update(eval_freq_envstep=eval_freq_envstep, confirm_episode=0)
    path = tmp_path / "ppo.py"
    path.write_text(f"main_config = {main!r}\ncreate_config = {ppo.create_config!r}\n"
                    f"system_config = {ppo.system_config!r}\n")
    return str(path)


def _rows(path) -> list:
    """``progress.csv``'s rows (none before it exists)."""
    if not path.is_file():
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def _serve(data: str, env: dict, cwd, names=("learner0", "collector0", "collector1")) -> list:
    """The roles' processes on a data file (``learner*``: the learner), once each serves."""
    roles = [_Lines(["-m", "dist", "--module", "learner" if n.startswith("learner") else "collector", "--module-name",
                     n, "-c", data], env, cwd) for n in names]
    for role in roles:
        role.wait_for("serves in namespace")
    return roles


# four processes on a loopback head (1-3 min on a loaded 2-core machine): slow-marked
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_an_on_policy_dist_run_trains_on_fresh_unrolls_without_a_replay(tmp_path, loopback_head, monkeypatch):
    """PPO under the --module forms: no replay actor; every unroll trained on once or dropped as stale
    and counted in result.json, as in -m parallel (the same loop)."""
    address, env = loopback_head
    monkeypatch.chdir(tmp_path)
    cfg = _ppo_file(tmp_path)
    assert main(["-m", "dist", "--module", "config", "-c", cfg, "--exp-name", str(tmp_path / "exp"), "--address",
                 address]) == 0
    roles = _serve(f"{cfg}.json", env, tmp_path)
    try:
        coord = _Lines(["-m", "dist", "--module", "coordinator", "-c", f"{cfg}.json", "--env-step", "512",
                        "--no-progress"], env, tmp_path)
        roles.append(coord)
        out = coord.end()
        assert coord.proc.returncode == 0, out[-3000:]
    finally:
        for role in roles:
            role.kill()
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert result["env_step"] >= 512 and result["batches"] >= 8 and "stale_dropped" in result
    assert result["train_iter"] + result["stale_dropped"] == result["batches"] and result["train_iter"] >= 1
    assert result["duplicates"] == 0 and result["batches_stored"] == result["batches"]
    assert not (tmp_path / "exp" / "replay_snapshot.pth.tar").exists()  # no replay in the on-policy path


# two runs of four processes on a loopback head (2-5 min on a loaded 2-core machine): slow-marked; the fast
# suite has the renewed collector and the resumed learner (test_roles.py) and the refusals (above)
@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("form,algo", [("module", "dqn"), ("short", "dqn"), ("module", "ppo")])
def test_an_interrupted_dist_coordinator_resumes_with_the_command_it_printed(tmp_path, loopback_head, monkeypatch,
                                                                            form, algo):
    """SIGINT to the coordinator once it trains: a checkpoint, the roles ended, and a resume command
    that (the --module form: with the roles started again from the same data file) finishes the run;
    its counters and clocks go on from the interrupted run's and the renewed collectors' batches are
    all stored. The short form's run (every role the driver's) resumes by its own printed command.
    PPO (no replay): every unroll of both runs is trained on once or counted as stale."""
    address, env = loopback_head
    monkeypatch.chdir(tmp_path)
    cfg = _file(tmp_path) if algo == "dqn" else _ppo_file(tmp_path, eval_freq_envstep=256)
    exp = tmp_path / "exp"
    data = f"{cfg}.json"
    if form == "module":
        assert main(["-m", "dist", "--module", "config", "-c", cfg, "--exp-name", str(exp), "--address", address]) == 0
        roles, driver = _serve(data, env, tmp_path), ["--module", "coordinator", "-c", data]
    else:
        roles, driver = [], ["-c", cfg, "-s", "0", "--address", address, "--exp-name", str(exp)]
    served = len(roles)
    try:
        coord = _Lines(["-m", "dist", *driver, "--env-step", "1500", "--no-progress"], env, tmp_path)
        roles.append(coord)
        trained = (lambda: (exp / "replay_snapshot.pth.tar").is_file()) if algo == "dqn" else (
            lambda: any(int(r["train_iter"] or 0) > 0 for r in _rows(exp / "progress.csv")))
        _wait_for(lambda: trained() or coord.proc.poll() is not None, 600, "a run that trains")
        coord.proc.send_signal(signal.SIGINT)
        out = coord.end()
        assert coord.proc.returncode == 130, out[-3000:]
        for role in roles[:served]:  # the coordinator ended the run: every role process ends by itself
            assert "ended: killed by the coordinator: the run ended" in role.end(120)
        first = json.loads((exp / "result.json").read_text())
        assert first["interrupted"] and first["signal"] == "SIGINT" and first["train_iter"] > 0, first
        command = shlex.split(re.search(r"resume with: (.*)", out).group(1))
        module = ["--module", "coordinator"] if form == "module" else []
        assert command == ["stride", "-m", "dist", *module, "--resume", str(exp), "--env-step", "1500"]
        if form == "module":
            roles += _serve(data, env, tmp_path)  # new processes, as they were started
        again = _Lines([*command[1:], "--no-progress"], env, tmp_path)
        roles.append(again)
        out = again.end()
        assert again.proc.returncode == 0, out[-3000:]
    finally:
        for role in roles:
            role.kill()
    result = json.loads((exp / "result.json").read_text())
    assert not result["interrupted"] and result["env_step"] >= 1500
    for key in ("env_step", "train_iter", "batches", "batches_stored", "train_cpu_seconds", "wall_seconds"):
        assert result[key] > first[key], key
    # the renewed collectors' batches are new incarnations': every one stored, none taken for a duplicate
    assert result["duplicates"] == 0 and result["batches_stored"] == result["batches"]
    if algo == "ppo":  # both runs' unrolls: each trained on once or dropped as stale, none kept in a replay
        assert result["train_iter"] + result["stale_dropped"] == result["batches"], result
        assert not (exp / "replay_snapshot.pth.tar").exists()
    rows = _rows(exp / "progress.csv")
    for key in ("train_iter", "envstep", "train_cpu_seconds", "wall_seconds"):
        column = [float(r[key]) for r in rows]
        assert column == sorted(column), f"{key} went back at the resume: {column}"
