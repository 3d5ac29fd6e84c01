"""A real ``stride`` command in a subprocess, for the tests that interrupt runs and run what they
print: one way to start it (this checkout's ``stride`` first on the path), to send it a signal at a
chosen moment, and to read back the command a ``stride: ...: <command>`` line shows."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Callable, List, Optional, Sequence

#: the command, run by this interpreter the way the ``stride`` console script runs it: ``main()``'s
#: code to ``sys.exit``. Not ``python -m stride``: under ``-m`` CPython (3.11, ``pymain_run_module``)
#: ends a process by SIGINT, whatever it exits with, once a KeyboardInterrupt was raised inside an
#: ``eval`` of a string, even a caught one; ``collections.namedtuple`` runs one as a module imports, so
#: a Ctrl-C during a run's imports made the exit code 130 a death by SIGINT (-2), now and then.
STRIDE = [sys.executable, "-c", "import sys; from stride.entry.cli import main; sys.exit(main())"]
#: the environment it runs in: this checkout's ``stride`` imported first
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                                    os.environ.get("PYTHONPATH", "")]))

#: the zoo's tic-tac-toe league, small: a league run of a few seconds
LEAGUE_CONFIG = """
import copy
from stride.zoo.pettingzoo.config.tictactoe_league_config import main_config as zoo, create_config
main_config = copy.deepcopy(zoo)
main_config["env"]["collector_env_num"] = 2
main_config["policy"]["model"]["encoder_hidden_size_list"] = [32, 32]
main_config["policy"]["random_collect_size"] = 32
main_config["policy"]["learn"]["batch_size"] = 16
main_config["league"].update(snapshot_every=10, eval_episode=2, stop_max_loss_rate=None, confirm_episode=0,
                             main_exploiter=dict(use=False))
"""


def run_stride(args: Sequence[str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    """``stride ARGS`` run to its end in ``cwd``, its output captured."""
    return subprocess.run([*STRIDE, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=timeout)


def _read_lines(pipe: Optional[IO[str]], into: List[str]) -> None:
    assert pipe is not None
    for line in pipe:
        into.append(line)


def interrupt_when(args: Sequence[str], cwd: Path, ready: Callable[[List[str]], bool],
                   sig: signal.Signals = signal.SIGINT, wait_s: float = 180) -> subprocess.CompletedProcess:
    """Start ``stride ARGS`` in ``cwd``, send it ``sig`` as soon as ``ready(stderr lines so far)``
    holds, and return its whole output once it has exited. Both pipes are read all along (a chatty
    run never blocks on a full pipe); the run ending before it is ready fails the test, naming its
    exit code and output."""
    proc = subprocess.Popen([*STRIDE, *args], cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out: List[str] = []
    err: List[str] = []
    readers = [threading.Thread(target=_read_lines, args=(pipe, lines), daemon=True)
               for pipe, lines in ((proc.stdout, out), (proc.stderr, err))]
    for reader in readers:
        reader.start()
    try:
        deadline = time.monotonic() + wait_s  # only a hung run reaches it
        while not ready(err):
            if proc.poll() is not None:
                for reader in readers:
                    reader.join(60)
                raise AssertionError(f"the run ended (rc {proc.returncode}) before it was ready: "
                                     f"{''.join(out)[-3000:]} {''.join(err)[-3000:]}")
            assert time.monotonic() < deadline, f"not ready in {wait_s} s"
            time.sleep(0.02)
        proc.send_signal(sig)
        proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
        for reader in readers:
            reader.join(60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "".join(out), "".join(err))


def printed_command(out: str, prefix: str) -> List[str]:
    """The command the one ``PREFIX<command>`` line of ``out`` shows, as a shell would split it."""
    lines = [line[len(prefix):] for line in out.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, out
    return shlex.split(lines[0])
