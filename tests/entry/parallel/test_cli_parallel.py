"""``stride -m parallel``'s refusals: one line, exit code 2, before any Ray process starts."""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import pytest

from stride.entry.cli import main
from stride.entry.parallel.pipeline import parallel_pipeline
from stride.utils.errors import ConfigError
from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as par


def _file(tmp_path, system) -> str:
    path = tmp_path / "cfg.py"
    path.write_text(f"main_config = {par.main_config!r}\ncreate_config = {par.create_config!r}\n"
                    f"system_config = {system!r}\n")
    return str(path)


@pytest.mark.parametrize("argv, message", [
    (["-m", "parallel", "-e", "cartpole", "-p", "dqn"], "-m parallel needs -c CONFIG_FILE"),
    (["-m", "paralel", "-c", "x.py"], "unknown mode 'paralel'; valid choices: serial, serial_onpolicy, serial_reward_model, eval, parallel, dist, collect_demo"),
])
def test_usage_errors(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("system, message", [
    ({"learner_num": 3}, "policy.learn.batch_size=64 does not split into system_config.learner_num=3 equal parts"),
    ({"collector_num": 64, "collector_cpus": 1.0}, "asks for 64.5 CPUs"),
    ({"colector_num": 2}, "did you mean 'system_config.collector_num'"),
    (3, "system_config must be a dict, got int"),
])
def test_bad_system_config_is_one_line(tmp_path, system, message, capsys):
    assert main(["-m", "parallel", "-c", _file(tmp_path, system), "--exp-name", str(tmp_path / "exp")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (tmp_path / "exp").exists()  # nothing written


def test_on_policy_learner_replicas_are_refused(tmp_path):
    from stride.zoo.cartpole.config import cartpole_ppo_config as ppo

    with pytest.raises(ConfigError, match="learner_num=2 with on-policy policy 'ppo'.*valid choices: learner_num=1"):
        parallel_pipeline([copy.deepcopy(ppo.main_config), copy.deepcopy(ppo.create_config), {"learner_num": 2}],
                          exp_name=str(tmp_path / "exp"))
    assert not (tmp_path / "exp").exists()


def test_an_address_where_nothing_listens_is_one_line(tmp_path, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once closed: nothing listens there
    assert main(["-m", "parallel", "-c", _file(tmp_path, {"address": f"127.0.0.1:{port}"}),
                 "--exp-name", str(tmp_path / "exp")]) == 2
    err = capsys.readouterr().err
    assert f"nothing answers at system_config.address='127.0.0.1:{port}'" in err and err.count("\n") == 1
    assert not (tmp_path / "exp").exists()


def test_ray_imported_too_early_is_one_line_and_leaves_no_temp_folder(tmp_path):
    """``local_ray`` refuses before it creates anything: no ``stride-ray-*`` folder is left behind."""
    pytest.importorskip("ray")
    code = ("import ray, tempfile\n"
            "from stride.entry.parallel.cluster import local_ray\n"
            "with local_ray():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
    out = subprocess.run([sys.executable, "-c", code], env={**env, "TMPDIR": str(tmp_path)}, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode != 0 and "ray was imported before the parallel pipeline started" in out.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("stride-ray-")] == []
