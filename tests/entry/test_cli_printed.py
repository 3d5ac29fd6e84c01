"""Every command ``stride`` prints runs as printed, in every mode that can be interrupted: a real
``stride`` process is sent SIGINT once it trains, and the ``resume with:`` line it printed --
``shlex.split``, nothing added, run from the same folder by the ``stride`` command's own
:func:`~stride.entry.cli.main` (what the ``stride`` console script calls; in this process, which saves a
torch import per case; the Ray league's in a ``stride`` process) -- finishes the run
(exit 0, ``result.json`` not interrupted), its counters going on from the interrupted run's.
``-m serial`` (off-policy) is tested so in ``test_serial_resume.py`` (with the resumed run equal to
an uninterrupted one) and inside its random warm-up in ``test_run_rules.py``; ``-m parallel`` in
``parallel/test_pipeline.py`` (slow).

The run folder's name has a space, so the printed command's quoting is part of what is tested."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import pytest

from stride.entry.cli import main as cli_main
from tests.entry.stride_process import LEAGUE_CONFIG, interrupt_when, printed_command, run_stride

pytestmark = pytest.mark.timeout(240)

RUN = "run 1"  # the experiment folder, relative to the command's folder
#: short evaluations (progress.csv rows: how the test sees training under way), never the stop value
NEVER_STOPS = ["--set", "env.stop_value=1e9", "--set", "env.evaluator_env_num=2", "--set", "env.n_evaluator_episode=2",
               "--set", "policy.eval.evaluator.confirm_episode=0"]

OFFLINE_CONFIG = """
import copy
from stride.zoo.cartpole.config.cartpole_bc_config import main_config as zoo, create_config
main_config = copy.deepcopy(zoo)
main_config["policy"]["collect"]["data_path"] = "demo"
"""


def _demo(folder: Path) -> None:
    """Twenty episodes of random CartPole actions as a Minari dataset (an offline run's data)."""
    import gymnasium as gym
    import numpy as np

    from stride.data.demo import stack_episode, write_demo_dataset

    env, rng, episodes = gym.make("CartPole-v1"), np.random.default_rng(0), []
    for k in range(20):
        obs, _ = env.reset(seed=k)
        steps, done = [], False
        while not done:
            action = int(rng.integers(2))
            nxt, reward, terminated, truncated, _ = env.step(action)
            steps.append(dict(obs=obs, action=np.int64(action), reward=np.float32(reward), next_obs=nxt,
                              terminated=terminated, truncated=truncated))
            obs, done = nxt, terminated or truncated
        episodes.append(stack_episode(steps))
    write_demo_dataset(str(folder / "demo"), episodes, env.observation_space, env.action_space, env_id="CartPole-v1")
    env.close()


def _onpolicy(folder: Path) -> List[str]:
    return ["-m", "serial_onpolicy", "-e", "cartpole", "-p", "ppo", "--env-step", "1800", *NEVER_STOPS,
            "--set", "policy.eval.evaluator.eval_freq_envstep=256"]


def _offline(folder: Path) -> List[str]:
    _demo(folder)
    (folder / "bc.py").write_text(OFFLINE_CONFIG)
    return ["-m", "offline", "-c", "bc.py", "--train-iter", "400", *NEVER_STOPS, "--set", "policy.eval.evaluator.eval_freq=20"]


def _league(folder: Path) -> List[str]:
    (folder / "league.py").write_text(LEAGUE_CONFIG)
    return ["-m", "league", "-c", "league.py", "--env-step", "800"]


def _league_on_ray(folder: Path) -> List[str]:
    return [*_league(folder), "--workers", "2"]


#: mode -> (the command's flags but -s, --exp-name and --no-progress; the file whose rows show training)
CASES: Dict[str, Tuple[Callable[[Path], List[str]], str]] = {
    "serial_onpolicy": (_onpolicy, "progress.csv"),
    "offline": (_offline, "progress.csv"),
    "league": (_league, "league.csv"),
    "league_on_ray": (_league_on_ray, "league.csv"),
}
#: two Ray starts (~25 s each on an idle 2-core machine, minutes under load): the serial league is the
#: same loop and resume
SLOW = {"league_on_ray"}


def _trained(path: Path) -> bool:
    """Whether ``path`` (a CSV the run appends to) has a complete row past train_iter 0."""
    if not path.is_file():
        return False
    lines = path.read_text().splitlines(keepends=True)
    rows = list(csv.DictReader([line for line in lines if line.endswith("\n")]))
    return any(row.get("train_iter", "").isdigit() and int(row["train_iter"]) > 0 for row in rows)


def _rows(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("mode", [pytest.param(m, marks=[pytest.mark.slow, pytest.mark.timeout(600)] if m in SLOW else [])
                                  for m in CASES])
def test_sigint_once_it_trains_then_the_printed_resume_command_finishes_the_run(tmp_path, monkeypatch, capsys, mode):
    make, table = CASES[mode]
    argv = [*make(tmp_path), "-s", "0", "--exp-name", RUN, "--no-progress"]
    run = tmp_path / RUN
    res = interrupt_when(argv, tmp_path, lambda err: _trained(run / table))
    assert res.returncode == 130, res.stderr[-3000:]
    first = json.loads((run / "result.json").read_text())
    assert first["interrupted"] is True and first["signal"] == "SIGINT" and first["train_iter"] > 0, first
    command = printed_command(res.stdout, "stride: resume with: ")
    assert command[:5] == ["stride", "-m", argv[1], "--resume", RUN], command  # the folder as given, quoted
    if mode in SLOW:  # Ray starts in a process that has not imported it: the command's own
        done = run_stride(command[1:], tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
    else:
        monkeypatch.chdir(tmp_path)
        assert cli_main(command[1:]) == 0, capsys.readouterr().err[-3000:]
    result = json.loads((run / "result.json").read_text())
    assert result["interrupted"] is False and not result["stop"], result
    for key in ("env_step", "train_iter", "train_cpu_seconds", "wall_seconds"):
        assert result[key] >= first[key], key
    assert result["train_iter"] > first["train_iter"]
    limit = first["max_env_step"] or first["max_train_iter"]
    assert limit is not None and (result["env_step"] if first["max_env_step"] else result["train_iter"]) >= limit
    rows = _rows(run / table)
    for key in ("train_iter", "envstep"):  # every row of both processes, in order: no counter went back
        column = [int(row[key]) for row in rows]
        assert column == sorted(column), f"{key} went back at the resume: {column}"
