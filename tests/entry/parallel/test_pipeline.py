"""``stride -m parallel`` end to end on a local Ray instance (subprocesses; each test starts Ray once).

A collector SIGKILLed mid-run is replaced and reported, no batch is stored twice, Ctrl-C saves a
checkpoint and leaves no process and nothing in /dev/shm; a SIGKILLed driver takes every Ray
process with it. The slow test kills a collector every 20 s for 2 minutes.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

import psutil
import pytest

pytest.importorskip("ray")

from stride.entry.parallel.pipeline import parallel_pipeline  # noqa: E402
from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as par  # noqa: E402
from tests.entry.parallel.results import check_ratio_bounds  # noqa: E402
from tests.processes import alive, still_alive  # noqa: E402
from tests.entry.stride_process import STRIDE  # noqa: E402


def _config(tmp_path, stop_value=1e9) -> str:
    main = copy.deepcopy(par.main_config)
    main["env"]["stop_value"] = stop_value  # unreachable: the run goes on until the test stops it
    main["policy"]["eval"]["evaluator"]["eval_freq_envstep"] = 10 ** 6
    path = tmp_path / "cfg.py"
    path.write_text(f"main_config = {main!r}\ncreate_config = {par.create_config!r}\n"
                    f"system_config = {par.system_config!r}\n")
    return str(path)


_RUNS: list = []


@pytest.fixture(autouse=True)
def _no_run_left_behind():
    """A failing test still ends its run: SIGKILL to the driver, whose watchdog stops Ray."""
    yield
    while _RUNS:
        proc = _RUNS.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)


def _start(tmp_path, *extra: str) -> subprocess.Popen:
    cmd = [*STRIDE, "-m", "parallel", "-c", _config(tmp_path), "-s", "0", "--exp-name", str(tmp_path / "exp"),
           "--no-progress", "--env-step", "2000000", *extra]
    # its own process group, as a terminal gives a command: Ctrl-C reaches the whole group
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    _RUNS.append(proc)
    return proc


def _descendants(proc: subprocess.Popen) -> list:
    try:
        return psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _cmdline(p: psutil.Process) -> list:
    """``p``'s command line; empty for a process gone mid-probe (one of Ray's short-lived helpers)."""
    try:
        return p.cmdline()
    except psutil.Error:
        return []


def _actors(proc: subprocess.Popen, role: str = "CollectorRole") -> list:
    found = []
    for p in _descendants(proc):
        try:
            if role in " ".join(p.cmdline()):
                found.append(p)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            pass
    return found


def _collectors(proc: subprocess.Popen) -> list:
    return _actors(proc, "CollectorRole")


def _wait(cond, timeout: float, what: str, proc: subprocess.Popen):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the run ended (rc {proc.returncode}) while waiting for {what}: {err[-2000:]}")
        time.sleep(0.3)
    proc.kill()
    pytest.fail(f"timed out waiting for {what}")


def _deaths(tmp_path) -> int:
    log = tmp_path / "exp" / "log" / "coordinator.txt"
    return log.read_text().count("died") if log.exists() else 0


def _batches(tmp_path) -> int:
    log = tmp_path / "exp" / "log" / "coordinator.txt"
    return log.read_text().count("batches=") if log.exists() else 0


def _kill_collectors(tmp_path, proc, kills: int, every: float) -> None:
    for k in range(kills):
        victims = _wait(lambda: [c for c in _collectors(proc) if alive(c)], 120, "collector actors", proc)
        victims[k % len(victims)].send_signal(signal.SIGKILL)
        _wait(lambda: _deaths(tmp_path) >= k + 1, 60, f"kill {k + 1} to be reported", proc)
        if k + 1 < kills:
            time.sleep(every)


def _log_count(tmp_path, text: str) -> int:
    log = tmp_path / "exp" / "log" / "coordinator.txt"
    return log.read_text().count(text) if log.exists() else 0


def _interrupt_and_check(tmp_path, proc, shm_before: set, kills: int, replay_kills: int = 0) -> dict:
    pids = _descendants(proc)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C on a terminal does
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert result["interrupted"] and result["signal"] == "SIGINT"
    assert len(result["collector_restarts"]) == kills == err.count("died (")  # every kill reported, on stderr too
    assert result["duplicates"] == 0 and result["batches"] > 0  # no batch twice
    # every batch the coordinator forwarded is stored or, when a replay restart lost it, counted as a gap
    assert result["batches_stored"] + result["gaps"] == result["batches"]
    assert result["replay_restarts"] == replay_kills == err.count("replay actor was restarted")
    if not replay_kills:
        assert result["gaps"] == 0
    assert (tmp_path / "exp" / "ckpt" / "ckpt_latest.txt").is_file()
    assert "resume" in out or "interrupted" in out
    assert still_alive(pids) == []
    assert set(os.listdir("/dev/shm")) <= shm_before
    return result


def test_a_sigkilled_collector_and_replay_cost_counted_batches_and_the_run_reaches_its_limit(tmp_path):
    """A collector, then the replay actor SIGKILLed mid-run: the run goes on to its env-step limit
    (exit 0); the replay comes back from its last snapshot and one stderr line says what it lost
    (batches, items), as result.json does; every batch is accounted for (stored + counted lost =
    sent) and nothing of the run is left. Each step waits on an event (a log line, a file)."""
    shm_before = set(os.listdir("/dev/shm"))
    proc = _start(tmp_path, "--env-step", "4000")  # ~500 batches; the kills come by ~250
    _wait(lambda: len(_collectors(proc)) == 2 and _batches(tmp_path) >= 1, 180, "two collectors and 100 batches",
          proc)
    _kill_collectors(tmp_path, proc, kills=1, every=0)
    before = _batches(tmp_path)
    # 100 batches more: the replay's snapshot (every 50 stored) holds the new incarnation's numbering
    _wait(lambda: _batches(tmp_path) > before, 120, "training to go on after the collector kill", proc)
    assert (tmp_path / "exp" / "replay_snapshot.pth.tar").is_file()
    pids = _descendants(proc)
    _actors(proc, "ReplayRole")[0].send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert not result["interrupted"] and result["env_step"] >= 4000
    lines = [line for line in err.splitlines() if "replay actor was restarted" in line]
    assert len(lines) == 1 and "(from its last snapshot)" in lines[0], err[-2000:]
    lost = re.search(r"lost the (\d+) batch\(es\) \((\d+) items\) stored since", lines[0])
    assert lost and (int(lost[1]), int(lost[2])) == (result["replay_lost_batches"], result["replay_lost_items"])
    assert result["replay_restarts"] == 1 and len(result["collector_restarts"]) == 1 == err.count("died (")
    assert result["duplicates"] == 0 and result["gaps"] == result["replay_lost_batches"]
    # sent = the batches that arrived + the one in the killed collector; stored + counted lost = sent
    assert result["batches_stored"] + result["lost_batches"] == result["batches"] + 1
    assert still_alive(pids) == []
    assert set(os.listdir("/dev/shm")) <= shm_before


def test_sigkilled_driver_leaves_no_ray_process(tmp_path):
    proc = _start(tmp_path)
    _wait(lambda: len(_collectors(proc)) == 2, 180, "two collectors", proc)
    pids = _descendants(proc)
    assert len(pids) >= 5  # watchdog, ray start, GCS, raylet, workers ...
    guard = next(cmd for cmd in map(_cmdline, pids) if "stride.entry.parallel.watchdog" in cmd)
    temp_dir = guard[guard.index("--remove") + 1]
    assert os.path.isdir(temp_dir)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate()
    assert still_alive(pids) == []
    assert not os.path.exists(temp_dir)  # Ray's logs and sockets removed by the watchdog
    assert (tmp_path / "exp" / "log" / "ray" / "raylet.out").is_file()  # ... and kept in the run's folder first
    assert not [line for line in err.splitlines() if ".cc:" in line]  # no native line of Ray's on the terminal


# two runs (two Ray starts, ~25 s each on an idle 2-core machine, 60-90 s under load): slow-marked;
# the fast suite has the roles' resume (test_roles.py) and the ledger's (test_tags.py)
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ctrl_c_and_the_printed_resume_command_reach_the_stop_counters_and_clocks_never_go_back(tmp_path):
    """The zoo's parallel CartPole DQN, as shipped, interrupted (SIGINT) once it trains and resumed
    with the command it printed, reaches its stop value as the uninterrupted run of
    ``test_the_zoo_parallel_configs_solve_cartpole`` does; every counter and clock of the resumed
    run's ``result.json`` and ``progress.csv`` goes on from the interrupted one's."""
    cfg = os.path.join(os.path.dirname(par.__file__), "cartpole_dqn_config.py")
    proc = subprocess.Popen([*STRIDE, "-m", "parallel", "-c", cfg, "-s", "0", "--exp-name", "exp", "--no-progress",
                             "--env-step", "100000"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    _RUNS.append(proc)
    # 50 stored batches (400 env steps): training is under way, the first evaluation after 0 comes at 1,000
    _wait(lambda: (tmp_path / "exp" / "replay_snapshot.pth.tar").is_file(), 180, "50 batches", proc)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    first = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert first["interrupted"] and not first["stop"] and first["train_iter"] > 0
    command = shlex.split(re.search(r"resume with: (.*)", out).group(1))
    assert command == ["stride", "-m", "parallel", "--resume", "exp", "--env-step", "100000"]
    done = subprocess.run([*STRIDE, *command[1:], "--no-progress"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert result["stop"] and not result["interrupted"] and result["eval_return"] >= 195
    for key in ("env_step", "train_iter", "batches", "batches_stored", "train_cpu_seconds", "wall_seconds"):
        assert result[key] > first[key], key
    assert result["eval_cpu_seconds"] >= first["eval_cpu_seconds"]
    # the resumed collectors are new incarnations: every batch of theirs stored, none taken for a duplicate
    assert result["duplicates"] == 0 and result["batches_stored"] == result["batches"] and result["lost_batches"] == 0
    with open(tmp_path / "exp" / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    serial = ["train_iter", "envstep", "eval_return_mean", "confirm_return_mean", "eval_return_min",
              "eval_return_max", "train_cpu_seconds", "wall_seconds"]
    assert list(rows[0])[:len(serial)] == serial and {"staleness_mean", "lost_batches"} <= set(rows[0])
    assert len(rows) >= 2 and float(rows[-1]["confirm_return_mean"]) >= 195
    for key in ("train_iter", "envstep", "train_cpu_seconds", "wall_seconds"):
        column = [float(r[key]) for r in rows]
        assert column == sorted(column), f"{key} went back at the resume: {column}"
    again = parallel_pipeline(None, resume=str(tmp_path / "exp"))  # a finished run is not trained again
    assert again.result["already_finished"] and again.result["train_iter"] == result["train_iter"]


# a run in its own process: Ray must not be imported before the pipeline starts it (this module imports it)
CALLBACK_RUN = """
import json, sys
from stride.entry.parallel.pipeline import parallel_pipeline
from stride.entry.run import RunCallback

class StopAt(RunCallback):
    def __init__(self, n):
        self.n, self.seen = n, {"collects": 0, "trains": 0, "evals": 0}
    def on_collect(self, envstep, train_iter):
        self.seen["collects"] += 1
    def on_eval(self, row):
        self.seen["evals"] += 1
    def on_train(self, train_iter, log):
        self.seen["trains"] += 1
        return train_iter >= self.n

if __name__ == "__main__":
    stop_at = StopAt(50)
    result = parallel_pipeline(sys.argv[1], seed=0, max_env_step=100000, exp_name=sys.argv[2], progress=False,
                               callbacks=[stop_at]).result
    print(json.dumps(dict(stop_at.seen, stopped_by=result["stopped_by"], interrupted=result["interrupted"])))
"""


@pytest.mark.slow  # a Ray start
def test_run_callbacks_see_every_batch_train_call_and_evaluation_and_may_stop_the_run(tmp_path):
    (tmp_path / "run.py").write_text(CALLBACK_RUN)
    done = subprocess.run([sys.executable, "run.py", _config(tmp_path), str(tmp_path / "exp")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert seen["stopped_by"] == result["stopped_by"] == "StopAt" and not result["interrupted"] and not result["stop"]
    assert result["train_iter"] >= 50 and os.path.isfile(result["final_checkpoint"])
    assert seen["collects"] == result["batches"] and 0 < seen["trains"] <= result["batches"] and seen["evals"] == 1


@pytest.mark.slow
def test_a_collector_killed_every_20_s_for_2_minutes(tmp_path):
    shm_before = set(os.listdir("/dev/shm"))
    proc = _start(tmp_path)
    _wait(lambda: len(_collectors(proc)) == 2 and _batches(tmp_path) >= 1, 180, "two collectors and 100 batches",
          proc)
    _kill_collectors(tmp_path, proc, kills=6, every=20)
    before = _batches(tmp_path)
    _wait(lambda: _batches(tmp_path) > before, 120, "training to go on after the last kill", proc)
    result = _interrupt_and_check(tmp_path, proc, shm_before, kills=6)
    assert {r["collector"] for r in result["collector_restarts"]} == {"collector0", "collector1"}


@pytest.mark.slow
def test_joins_a_running_cluster_by_address_and_leaves_no_actor(tmp_path):
    """``system_config.address``: the roles run on a cluster the pipeline did not start (the ``-m dist`` shape)."""
    import secrets
    import shutil
    import socket
    import tempfile

    from stride.entry.parallel.cluster import loopback_env

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, **loopback_env(secrets.token_hex(32))}
    ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
    temp_dir = tempfile.mkdtemp(prefix="stride-ray-")  # short: Ray's socket paths must fit 107 bytes
    head = subprocess.Popen([sys.executable, "-m", "stride.entry.parallel.watchdog", "--", ray_cli, "start", "--head",
                             "--block", "--node-ip-address=127.0.0.1", f"--port={port}", "--include-dashboard=false",
                             "--disable-usage-stats", f"--temp-dir={temp_dir}"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)
    try:
        system = dict(par.system_config, address=f"127.0.0.1:{port}")
        code = ("import copy, json, sys\n"
                "from stride.entry.parallel.pipeline import parallel_pipeline\n"
                "from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as c\n"
                f"p = parallel_pipeline([copy.deepcopy(c.main_config), c.create_config, {system!r}], seed=0, "
                f"max_env_step=400, exp_name={str(tmp_path / 'exp')!r}, progress=False)\n"
                "print(json.dumps({k: p.result[k] for k in ('env_step', 'batches', 'duplicates')}))\n")
        deadline = time.monotonic() + 120
        while True:  # the head takes a few seconds: wait until its GCS port answers
            assert head.poll() is None and time.monotonic() < deadline, "the Ray head did not start"
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.5)
        time.sleep(3)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert result["env_step"] >= 400 and result["duplicates"] == 0 and result["batches"] > 0
        roles = [p for p in psutil.Process(head.pid).children(recursive=True)
                 if any(r in " ".join(p.cmdline()) for r in ("CollectorRole", "ReplayRole", "LearnerRole"))]
        assert still_alive(roles, timeout=30) == []  # the driver's actors ended with it; the cluster stays up
        assert head.poll() is None
    finally:
        head.stdin.close()
        head.wait(90)
        shutil.rmtree(temp_dir, ignore_errors=True)


# IMPALA's run is slow-marked (pytest -m slow runs it): it once reached 100k env steps before 475 held
# (one in four runs, 2026-11-29; passed alone in 33-47 s). Under load 8-33 (issue 31) three runs with Ray's
# actors at niceness 15 held 475 at 12.0-12.1k env steps but took 301-591 s (pytest's limit: 300); with
# them at 0 (cluster.py's WORKER_NICENESS) the test passed in 290 s at load 28-37. The DQN config's run
# (195 in ~1-2k env steps) is docs/pipelines/ray.md's -m parallel block: tests/docs runs it and checks
# its result.json as this test does (CHECKS there), so CI makes that run once
@pytest.mark.slow
@pytest.mark.parametrize("name", ["cartpole_impala_config"])
def test_the_zoo_parallel_configs_solve_cartpole(tmp_path, name):
    """The zoo's parallel CartPole configs, as shipped, until their stop value holds on the 100-episode
    confirmation (IMPALA 475 in ~12k env steps)."""
    cfg = os.path.join(os.path.dirname(par.__file__), f"{name}.py")
    proc = subprocess.run([*STRIDE, "-m", "parallel", "-c", cfg, "-s", "0", "--exp-name", str(tmp_path / "exp"),
                           "--no-progress", "--env-step", "100000"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    stop_value = {"cartpole_impala_config": 475}[name]
    assert result["stop"] and result["eval_return"] >= stop_value
    assert result["duplicates"] == 0 and result["batches_stored"] == result["batches"]
    check_ratio_bounds(result)


@pytest.mark.slow  # ~35 s (Ray's start and the actors'); tests/docs' ray.md run (the zoo DQN) checks the limiter's bounds
def test_the_replay_ratio_holds_within_10_percent(tmp_path):
    """``system_config.replay_ratio`` (default: the serial config's 4 steps per 8 env steps) over a
    short run, by the result's counts; the learner is not called once per batch (lockstep) but
    whenever its call is done and env steps allow, up to 8 steps a call."""
    proc = subprocess.run([*STRIDE, "-m", "parallel", "-c", _config(tmp_path), "-s", "0", "--exp-name",
                           str(tmp_path / "exp"), "--no-progress", "--env-step", "2000"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert result["replay_ratio"] == 0.5 and result["learn_start"] == 64 and result["env_step"] >= 2000
    assert abs(result["replay_ratio_achieved"] / result["replay_ratio"] - 1) <= 0.10
    assert result["replay_ratio_achieved"] == round(result["train_iter"] / (result["env_step"] - 64), 6)
    assert result["train_iter"] / 8 <= result["train_calls"] < result["batches"]
    check_ratio_bounds(result)
