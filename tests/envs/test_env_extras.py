"""A Gymnasium env family behind an optional extra fails with one line naming the extra."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from stride.envs.gymnasium_env import GymnasiumEnv
from stride.utils.extras import MissingExtraError


def test_missing_mujoco_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco -> ModuleNotFoundError
    env = GymnasiumEnv("Hopper-v5")
    with pytest.raises(MissingExtraError) as info:
        env.reset()
    assert str(info.value) == 'MuJoCo envs need mujoco: pip install "stride-rl[mujoco]"'


def test_missing_box2d_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "Box2D", None)
    env = GymnasiumEnv("LunarLander-v3")
    with pytest.raises(MissingExtraError) as info:
        env.reset()
    assert str(info.value) == 'Box2D envs need Box2D: pip install "stride-rl[box2d]"'


@pytest.mark.timeout(120)
def test_the_command_without_box2d_names_the_extra(tmp_path):
    """Issue 28: without Box2D the command printed Gymnasium's ``pip install swig`` advice. A package
    named ``Box2D`` ahead on the path that is "not found" stands for the missing wheel."""
    shadow = tmp_path / "shadow" / "Box2D"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ModuleNotFoundError("No module named \'Box2D\'", name="Box2D")\n')
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    run = tmp_path / "run"
    run.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shadow.parent), root, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-m", "stride", "-m", "serial", "-e", "lunarlander", "-p", "dqn", "-s", "0",
                          "--env-step", "200", "--no-progress"], cwd=run, env=env, capture_output=True, text=True,
                         timeout=100)
    assert out.returncode == 1, out.stderr[-2000:]
    assert out.stderr.strip() == 'stride: error: Box2D envs need Box2D: pip install "stride-rl[box2d]"'
    assert os.listdir(run) == []


def test_other_envs_need_no_extra():
    env = GymnasiumEnv("CartPole-v1")
    env.reset()
    env.close()
