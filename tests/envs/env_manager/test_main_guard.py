"""A script that starts subprocess env managers without ``if __name__ == "__main__":`` stops at the
first launch with one line saying what to add, and the script never runs again in a worker;
with the guard (or with context='fork', which does not re-run the script) it works."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

_MANAGER_SCRIPT = """
import functools, os
from stride.envs import {cls}
from stride.testing import make_fake_env

open(os.path.join({marks!r}, str(os.getpid())), "w").close()  # one file per run of this script


def run():
    m = {cls}([functools.partial(make_fake_env) for _ in range(3)], {{"context": {context!r}}})
    m.launch()
    m.step({{i: 0 for i in m.ready_obs}})
    m.close()
    print("launched and stepped")


{call}
"""


def _run(tmp_path: Path, cls: str, context: str, guarded: bool, as_module: bool = False) -> tuple:
    marks = tmp_path / "runs"
    marks.mkdir()
    call = 'if __name__ == "__main__":\n    run()' if guarded else "run()"
    source = textwrap.dedent(_MANAGER_SCRIPT).format(cls=cls, context=context, marks=str(marks), call=call)
    if as_module:
        (tmp_path / "userpkg").mkdir()
        (tmp_path / "userpkg" / "__init__.py").write_text("")
        (tmp_path / "userpkg" / "train.py").write_text(source)
        argv = [sys.executable, "-m", "userpkg.train"]
    else:
        (tmp_path / "train.py").write_text(source)
        argv = [sys.executable, "train.py"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    line = [s.strip() for s in source.splitlines()].index("run()") + 1  # where the script starts the run
    return done, len(os.listdir(marks)), line


@pytest.mark.parametrize("cls", ["SyncSubprocessEnvManager", "AsyncSubprocessEnvManager"])
@pytest.mark.parametrize("context", ["forkserver", "spawn"])
def test_an_unguarded_script_stops_at_launch_with_one_line(tmp_path, cls, context):
    done, runs, line = _run(tmp_path, cls, context, guarded=False)
    assert done.returncode == 1 and runs == 1, done.stderr  # the script never ran again in a worker
    assert done.stderr.count("Traceback") == 1 and "launched" not in done.stdout
    last = done.stderr.strip().splitlines()[-1]
    assert last == (f"stride.utils.errors.StrideError: {tmp_path / 'train.py'}, line {line}, starts env worker processes "
                    f"outside `if __name__ == \"__main__\":`, and with env.manager.context='{context}' every worker runs "
                    f"the script again (and would start the run again): put the code that starts the run under that guard")


def test_an_unguarded_module_run_with_dash_m_stops_too(tmp_path):
    done, runs, line = _run(tmp_path, "SyncSubprocessEnvManager", "forkserver", guarded=False, as_module=True)
    assert done.returncode == 1 and runs == 1, done.stderr
    assert f"userpkg/train.py, line {line}, starts env worker processes outside" in done.stderr


@pytest.mark.parametrize("context,guarded", [("forkserver", True), ("spawn", True), ("fork", False)])
def test_a_guarded_script_or_fork_works(tmp_path, context, guarded):
    done, runs, _ = _run(tmp_path, "SyncSubprocessEnvManager", context, guarded=guarded)
    assert done.returncode == 0 and "launched and stepped" in done.stdout, done.stderr
    # forkserver / spawn workers import the script's top level (as multiprocessing always does), fork ones do not
    assert runs == (1 if context == "fork" else 1 + 3)


_ZOO_SCRIPT = """
from stride.zoo.cartpole.config.cartpole_dqn_config import main_config, create_config
from stride.entry import serial_pipeline

create_config["env_manager"]["type"] = "subprocess"
main_config["env"]["collector_env_num"] = 4
main_config["env"]["evaluator_env_num"] = 4
serial_pipeline([main_config, create_config], seed=0, max_env_step=200, progress=False)
"""


def test_a_zoo_config_run_as_an_unguarded_script(tmp_path):
    (tmp_path / "my_cartpole.py").write_text(textwrap.dedent(_ZOO_SCRIPT))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "my_cartpole.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 1 and done.stderr.count("Traceback") == 1, done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith("put the code that starts the run under that guard")
    # no folder at all: not one per worker that ran the script again (8b5a9af), and not the user's run's
    # either, since it could not start (issue 28: a run that could not start leaves nothing)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("cartpole_dqn")] == []
