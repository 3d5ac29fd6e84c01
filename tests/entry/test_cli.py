"""The ``stride`` command in subprocesses (cwd = a temp folder), and the Python API's action check.

All subprocesses are started at once by one module fixture (each pays Python + torch start-up),
then every test checks its own result.
"""

from __future__ import annotations

import copy
import csv
import glob
import json
import os
import re
import subprocess

import pytest
import torch

from stride.zoo.cartpole.config import cartpole_dqn_config as zoo
from tests.entry.stride_process import STRIDE

TIMEOUT = 240


def _config_file(path, patch_main=None, patch_create=None) -> str:
    main, create = copy.deepcopy(zoo.main_config), copy.deepcopy(zoo.create_config)
    if patch_main:
        patch_main(main)
    if patch_create:
        patch_create(create)
    with open(path, "w") as f:
        f.write(f"main_config = {main!r}\n\ncreate_config = {create!r}\n")
    return os.path.basename(path)


def _typo(main):
    main["policy"]["learn"]["batch_sise"] = main["policy"]["learn"].pop("batch_size")


def _bad_action_shape(main):
    main["policy"]["model"]["action_shape"] = 3


def _bad_choice(main):
    main["policy"]["learn"]["target_update_type"] = "polyak"


ERROR_CASES = {
    # name: (argv builder(dir) -> list, regexes the single stderr line must match)
    "unknown_env": (lambda d: ["-m", "serial", "-e", "cartpol", "-p", "dqn", "-s", "0"],
                    [r"'cartpol'", r"did you mean 'cartpole'", r"valid choices: .*cartpole"]),
    "unknown_policy": (lambda d: ["-m", "serial", "-e", "cartpole", "-p", "dqm", "-s", "0"],
                       [r"'dqm'", r"did you mean 'dqn'", r"valid choices: .*dqn"]),
    "missing_config": (lambda d: ["-m", "serial", "-c", "no_such_config.py", "-s", "0"],
                       [r"no_such_config\.py", r"does not exist"]),
    "config_typo": (lambda d: ["-m", "serial", "-c", _config_file(os.path.join(d, "typo_config.py"), _typo), "-s", "0"],
                    [r"'policy\.learn\.batch_sise'", r"did you mean '(policy\.learn\.)?batch_size'"]),
    "bad_action_shape": (lambda d: ["-m", "serial", "-c",
                                    _config_file(os.path.join(d, "shape_config.py"), _bad_action_shape), "-s", "0"],
                         [r"action_shape=3", r"Discrete\(2\)", r"set it to 2"]),
    "bad_choice": (lambda d: ["-m", "serial", "-c", _config_file(os.path.join(d, "choice_config.py"), _bad_choice),
                              "-s", "0"],
                   [r"'polyak'", r"valid choices: assign, momentum"]),
    "unknown_mode": (lambda d: ["-m", "seriall", "-e", "cartpole", "-p", "dqn", "-s", "0"],
                     [r"'seriall'", r"valid choices: .*serial"]),
}

TRAIN_ARGV = ["-m", "serial", "-e", "cartpole", "-p", "dqn", "--train-iter", "50", "-s", "0", "--no-progress"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}  # the filters a user's shell has
    env["OMP_NUM_THREADS"] = "1"
    procs = {}
    for name, (argv, _) in list(ERROR_CASES.items()) + [("train", (lambda d: TRAIN_ARGV, None))]:
        d = str(tmp_path_factory.mktemp(name))
        args = argv(d)
        before = sorted(os.listdir(d))
        procs[name] = (d, before, subprocess.Popen([*STRIDE, *args], cwd=d, env=env,
                                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    out = {}
    try:
        for name, (d, before, p) in procs.items():
            stdout, stderr = p.communicate(timeout=TIMEOUT)
            out[name] = {"dir": d, "before": before, "rc": p.returncode, "stdout": stdout, "stderr": stderr}
    finally:
        for _, _, p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    return out


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_cli_user_error_is_one_line(runs, case):
    r = runs[case]
    assert r["rc"] != 0, r
    assert "Traceback" not in r["stderr"] + r["stdout"]
    lines = [ln for ln in r["stderr"].splitlines() if ln.strip()]
    assert len(lines) == 1, r["stderr"]
    for pattern in ERROR_CASES[case][1]:
        assert re.search(pattern, lines[0]), (pattern, lines[0])
    # nothing written: no experiment folder, no partial files
    assert sorted(os.listdir(r["dir"])) == r["before"]


# ---- a real (short) training run ------------------------------------------------------------------
@pytest.fixture(scope="module")
def train_run(runs):
    r = runs["train"]
    assert r["rc"] == 0, r["stderr"][-3000:]
    assert "Traceback" not in r["stderr"]
    exps = [p for p in os.listdir(r["dir"]) if os.path.isdir(os.path.join(r["dir"], p))]
    assert exps == ["cartpole_dqn_seed0"], exps
    return os.path.join(r["dir"], exps[0])


def test_train_run_config_files(train_run):
    for f in ("total_config.py", "formatted_total_config.py", "total_config.json"):
        assert os.path.isfile(os.path.join(train_run, f)), f
    ns: dict = {}
    with open(os.path.join(train_run, "formatted_total_config.py")) as f:
        exec(f.read(), ns)
    assert ns["create_config"]["policy"]["type"] == "dqn"
    with open(os.path.join(train_run, "total_config.json")) as f:
        assert json.load(f)["policy"]["model"]["action_shape"] == 2


def test_train_run_checkpoint(train_run):
    ckpts = glob.glob(os.path.join(train_run, "ckpt", "*.pth.tar"))
    assert ckpts
    final = os.path.join(train_run, "ckpt", "iteration_50.pth.tar")
    assert final in ckpts
    state = torch.load(final, weights_only=True)
    assert state["train_iter"] == 50 and "model" in state["policy"]
    assert not [f for f in os.listdir(os.path.join(train_run, "ckpt")) if "tmp" in f]


def _scalar_tags(train_run) -> list:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = glob.glob(os.path.join(train_run, "log", "**", "events.out.tfevents.*"), recursive=True)
    assert events
    tags = []
    for d in sorted({os.path.dirname(e) for e in events}):
        acc = EventAccumulator(d)
        acc.Reload()
        tags += acc.Tags()["scalars"]
    return tags


def test_train_run_tensorboard_evaluator_scalars(train_run):
    tags = _scalar_tags(train_run)
    assert any(t.startswith("evaluator_iter/") for t in tags), tags
    assert "evaluator_iter/reward_mean" in tags


def test_train_run_tensorboard_learner_scalars(train_run):
    tags = _scalar_tags(train_run)
    assert any(t.startswith("learner_iter/") for t in tags), tags


def test_train_run_text_log_progress_and_result(train_run):
    logs = glob.glob(os.path.join(train_run, "log", "*.txt"))
    assert logs and any(os.path.getsize(p) > 0 for p in logs)
    with open(os.path.join(train_run, "log", "evaluator.txt")) as f:
        assert "reward_mean" in f.read()
    with open(os.path.join(train_run, "log", "learner.txt")) as f:
        assert "train_iter=50" in f.read()  # the last (partial) log window is written when the run ends
    with open(os.path.join(train_run, "progress.csv")) as f:
        rows = list(csv.DictReader(f))
    assert rows and rows[0]["train_iter"] == "0" and float(rows[0]["eval_return_mean"]) > 0
    with open(os.path.join(train_run, "result.json")) as f:
        result = json.load(f)
    assert result["train_iter"] == 50 and result["stop"] is False and result["env_step"] > 0
    assert not [p for p in os.listdir(train_run) if "tmp" in p]


def test_train_run_stdout_summary(runs, train_run):
    out = runs["train"]["stdout"]
    assert "train_iter=50" in out and "cartpole_dqn_seed0" in out


# ---- in-process checks ------------------------------------------------------------------------
def test_help_documents_every_flag(capsys):
    from stride.entry.cli import main

    assert main(["-h"]) == 0
    text = capsys.readouterr().out
    for flag in ("--mode", "--env", "--policy", "--config", "--seed", "--train-iter", "--env-step", "--exp-name",
                 "--resume", "--no-progress", "--version", "--set", "--load", "--episodes"):
        assert flag in text, flag


def test_version(capsys):
    from stride import __version__
    from stride.entry.cli import main

    assert main(["-v"]) == 0
    assert capsys.readouterr().out.strip() == f"stride {__version__}"


def test_every_mode_of_the_table_is_listed_and_its_entry_exists(capsys):
    """The one table of modes: each row's entry imports (a mistyped path would fail only when a run
    starts), ``stride -h`` lists each mode with its line, and a flag a mode does not take is refused
    naming the modes that take it."""
    from stride.entry.cli import MODES, main

    for mode in MODES.values():
        assert mode.entry_point() is not None, mode.name
    assert main(["-h"]) == 0
    text = capsys.readouterr().out
    for mode in MODES.values():
        assert re.search(rf"^  {mode.name} +{re.escape(mode.help)}\n +{re.escape(mode.synopsis())}$", text, re.M), mode.name
    assert main(["-m", "eval", "--load", "run", "--train-iter", "5"]) == 2
    assert capsys.readouterr().err == ("stride: error: --train-iter is for -m serial, -m serial_onpolicy, "
                                       "-m serial_reward_model, -m parallel, -m dist and -m offline, not -m eval\n")


def test_the_config_is_read_once_with_its_settings_and_each_seed_named_once(tmp_path, monkeypatch):
    """``-c`` read once for every seed, ``--set`` written into the entry's config (a parallel config's
    ``system_config.`` keys into its system config), one experiment name per seed."""
    from types import SimpleNamespace

    from stride.entry import cli, serial_entry, utils
    from stride.entry.parallel import pipeline
    from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as par

    reads, calls = [], []
    read = utils.read_config_file
    monkeypatch.setattr(utils, "read_config_file", lambda path: reads.append(path) or read(path))
    for module, name in ((serial_entry, "serial_pipeline"), (pipeline, "parallel_pipeline")):
        monkeypatch.setattr(module, name, lambda cfg, **kw: calls.append((cfg, kw)) or SimpleNamespace(
            result={"exp_dir": None}))  # no folder: nothing to report
    path = tmp_path / "my_config.py"
    path.write_text(f"main_config = {par.main_config!r}\ncreate_config = {par.create_config!r}\n"
                    f"system_config = {par.system_config!r}\n")
    common = ["-c", str(path), "-s", "1", "2", "--set", "policy.learn.batch_size=32", "--env-step", "100"]
    assert cli.main(["-m", "serial", *common]) == 0
    assert cli.main(["-m", "parallel", *common, "--set", "system_config.collector_num=3", "--no-progress"]) == 0
    assert reads == [str(path)] * 2
    assert [(kw["seed"], kw["exp_name"], kw["max_env_step"], kw["max_train_iter"], kw["progress"]) for _, kw in calls] \
        == [(1, "cartpole_dqn_parallel_seed1", 100, None, True), (2, "cartpole_dqn_parallel_seed2", 100, None, True),
            (1, "cartpole_dqn_parallel_seed1", 100, None, False), (2, "cartpole_dqn_parallel_seed2", 100, None, False)]
    assert [len(cfg) for cfg, _ in calls] == [2, 2, 3, 3]
    assert all(cfg[0]["policy"]["learn"]["batch_size"] == 32 for cfg, _ in calls)
    assert calls[2][0][2]["collector_num"] == 3 and par.system_config["collector_num"] == 2


def test_model_with_actions_outside_the_space_raises_invalid_action(tmp_path, monkeypatch):
    from stride.entry import serial_pipeline
    from stride.model import DQN
    from stride.utils.errors import InvalidActionError

    monkeypatch.chdir(tmp_path)
    main, create = copy.deepcopy(zoo.main_config), copy.deepcopy(zoo.create_config)
    main["env"].update(collector_env_num=2, evaluator_env_num=1, n_evaluator_episode=1)
    torch.manual_seed(0)
    with pytest.raises(InvalidActionError) as e:
        serial_pipeline([main, create], seed=0, model=DQN(4, 3), max_train_iter=2000, progress=False)
    msg = str(e.value)
    assert re.search(r"action \S*2\S* is outside the action space Discrete\(2\)", msg), msg
    assert "\n" not in msg
