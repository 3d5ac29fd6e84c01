"""A SIGKILLed main process takes every child down (workers, fork server, resource tracker) even
while the workers are stuck inside env code, and leaves nothing in /dev/shm; a manager launched
from a thread that then exits keeps its workers. Real processes, run by a script."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from tests.envs.tests_envs_helpers import gone, shm_entries

ROOT = Path(__file__).resolve().parents[3]

_SCRIPT = """
import json, os, sys, threading, time
import gymnasium as gym
import numpy as np
from stride.envs import {cls}, GymnasiumEnv


class Stuck(gym.Env):
    # action 1 gets stuck inside the step: in Python ('sleep') or in a C loop that holds the GIL
    observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {{}}

    def step(self, action):
        if action == 1:
            open(os.path.join({marks!r}, str(os.getpid())), "w").close()
            if {mode!r} == "sleep":
                time.sleep(3600)
            else:
                sum(range(10 ** 15))  # C code, GIL held, no signal handler can run
        return np.zeros(2, np.float32), 0.0, False, False, {{"pid": os.getpid()}}


if __name__ == "__main__":
    box = {{}}

    def launch():
        m = {cls}([lambda: GymnasiumEnv(Stuck()) for _ in range(2)], {{"context": {context!r}}})
        m.launch()
        box["m"] = m

    if {in_thread!r}:
        t = threading.Thread(target=launch)
        t.start()
        t.join()
        time.sleep(0.5)  # the launching thread is gone: the workers must not be
    else:
        launch()
    m = box["m"]
    pids = list(m.worker_pids)
    out = m.step({{0: 0, 1: 0}})
    while len(out) < 2:
        out.update(m.step({{}}))
    assert not any(ts.info.get("abnormal") for ts in out.values()), out
    assert m.worker_pids == pids
    print(json.dumps(pids), flush=True)
    m.step({{0: 1, 1: 1}})
"""


def _kill_all(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.parametrize("cls,mode,context,in_thread", [
    ("SyncSubprocessEnvManager", "sleep", "forkserver", False),
    ("SyncSubprocessEnvManager", "c_loop", "forkserver", False),
    ("AsyncSubprocessEnvManager", "c_loop", "forkserver", False),
    ("SyncSubprocessEnvManager", "c_loop", "forkserver", True),
    ("SyncSubprocessEnvManager", "c_loop", "spawn", False),
    ("SyncSubprocessEnvManager", "sleep", "spawn", True),
], ids=["sync-sleep", "sync-c", "async-c", "sync-c-thread", "sync-c-spawn", "sync-sleep-spawn-thread"])
def test_parent_sigkill_with_workers_stuck_in_env_code(tmp_path, cls, mode, context, in_thread):
    marks = tmp_path / "stuck"
    marks.mkdir()
    script = tmp_path / "stuck_run.py"
    script.write_text(textwrap.dedent(_SCRIPT.format(cls=cls, mode=mode, context=context, in_thread=in_thread, marks=str(marks))))
    shm_before = shm_entries()
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), start_new_session=True)
    family: list = []
    try:
        line = proc.stdout.readline()
        assert line, proc.communicate(timeout=10)[1]
        workers = json.loads(line)
        end = time.monotonic() + 20
        while len(os.listdir(marks)) < 2 and time.monotonic() < end:  # both workers inside the stuck step
            time.sleep(0.02)
        assert sorted(int(p) for p in os.listdir(marks)) == sorted(workers)
        family = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
        assert set(workers) < set(family)  # and the fork server / resource tracker
        proc.kill()
        proc.wait(10)
        assert gone(family, within=5.0), [psutil.Process(p).cmdline()[-1][:60] for p in family if psutil.pid_exists(p)]
        assert shm_entries() - shm_before == set()
    finally:
        _kill_all([proc.pid] + family)
        proc.communicate()
