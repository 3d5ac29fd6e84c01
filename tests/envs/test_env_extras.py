"""A Gymnasium env family behind an optional extra fails with one line naming the extra."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from stride.envs.gymnasium_env import GymnasiumEnv
from stride.utils.extras import MissingExtraError, install_hint
from tests.entry.stride_process import STRIDE


def test_missing_mujoco_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco -> ModuleNotFoundError
    env = GymnasiumEnv("Hopper-v5")
    with pytest.raises(MissingExtraError) as info:
        env.reset()
    assert str(info.value) == f'MuJoCo envs need mujoco: {install_hint("mujoco")}'


def test_missing_box2d_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "Box2D", None)
    env = GymnasiumEnv("LunarLander-v3")
    with pytest.raises(MissingExtraError) as info:
        env.reset()
    assert str(info.value) == f'Box2D envs need Box2D: {install_hint("box2d")}'


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _command_without(module: str, argv: list, tmp_path) -> subprocess.CompletedProcess:
    """``stride ARGV`` in an empty folder with ``module`` missing: a package of that name
    ahead on the path that is "not found" stands for the wheel a venv lacks."""
    shadow = tmp_path / "shadow" / module
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(f'raise ModuleNotFoundError("No module named {module!r}", name={module!r})\n')
    run = tmp_path / "run"
    run.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shadow.parent), ROOT, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([*STRIDE, *argv], cwd=run, env=env, capture_output=True, text=True,
                          timeout=100)


@pytest.mark.timeout(120)
def test_the_command_without_box2d_names_the_extra(tmp_path):
    """Issue 28: without Box2D the command printed Gymnasium's ``pip install swig`` advice."""
    out = _command_without("Box2D", ["-m", "serial", "-e", "lunarlander", "-p", "dqn", "-s", "0", "--env-step", "200",
                                     "--no-progress"], tmp_path)
    assert out.returncode == 1, out.stderr[-2000:]
    assert out.stderr.strip() == f'stride: error: Box2D envs need Box2D: {install_hint("box2d")}'
    assert os.listdir(tmp_path / "run") == []


@pytest.mark.timeout(120)
def test_a_board_game_without_pygame_names_what_is_missing(tmp_path):
    """Issue 28: PettingZoo's tic-tac-toe imports pygame, which ``[league]`` alone did not bring; the
    command said the env id "is not a PettingZoo env module" (exit 2). Now: what is missing, exit 1."""
    config = os.path.join(ROOT, "stride", "zoo", "pettingzoo", "config", "tictactoe_league_config.py")
    out = _command_without("pygame", ["-m", "league", "-c", config, "-s", "0", "--env-step", "200", "--no-progress"],
                           tmp_path)
    assert out.returncode == 1, out.stderr[-2000:]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "stride: error: PettingZoo env 'pettingzoo.classic.tictactoe_v3' needs pygame, which is not installed: "
        f'{install_hint("multiagent")}'), out.stderr
    assert os.listdir(tmp_path / "run") == []


def test_other_envs_need_no_extra():
    env = GymnasiumEnv("CartPole-v1")
    env.reset()
    env.close()
