"""``enable_save_replay`` / ``stride -m eval --replay-path``: one mp4 per finished episode."""

from __future__ import annotations

import glob
import json
import os
import sys

import numpy as np
import pytest

from stride.envs import GymnasiumEnv
from stride.utils.extras import MissingExtraError, install_hint
from tests.entry.stride_process import STRIDE

iio = pytest.importorskip("imageio.v3")
pytest.importorskip("imageio_ffmpeg")


def _frames(path: str) -> np.ndarray:
    return iio.imread(path, plugin="FFMPEG")


def test_each_finished_episode_is_one_video_with_every_frame(tmp_path):
    env = GymnasiumEnv("CartPole-v1")
    env.enable_save_replay(str(tmp_path))
    env.seed(0)
    lengths = []
    for _ in range(2):
        env.reset()
        n, done = 0, False
        while not done:
            done = env.step(env.random_action()).done
            n += 1
        lengths.append(n)
    env.reset()
    env.step(0)  # an episode still open at close is dropped
    env.close()
    files = sorted(os.listdir(tmp_path))
    assert files == ["episode0000.mp4", "episode0001.mp4"]  # no temporaries left
    for f, n in zip(files, lengths):
        frames = _frames(str(tmp_path / f))
        assert frames.shape == (n + 1, 400, 600, 3)  # the reset frame and one per step
        assert frames.std() > 0


def test_enabling_replay_on_a_made_env_remakes_it_rendering(tmp_path):
    env = GymnasiumEnv("CartPole-v1")
    env.reset()
    env.enable_save_replay(str(tmp_path))
    env.reset(seed=1)
    while not env.step(1).done:
        pass
    env.close()
    assert os.listdir(tmp_path) == ["episode0000.mp4"]


def test_render_mode_other_than_rgb_array_is_refused(tmp_path):
    from stride.utils.errors import ConfigError

    env = GymnasiumEnv(cfg=dict(env_id="CartPole-v1", make_kwargs=dict(render_mode="human")))
    env.enable_save_replay(str(tmp_path))
    with pytest.raises(ConfigError, match="rgb_array"):
        env.reset()


def test_a_missing_imageio_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "imageio", None)  # import imageio -> ModuleNotFoundError
    with pytest.raises(MissingExtraError) as e:
        GymnasiumEnv("CartPole-v1").enable_save_replay(str(tmp_path))
    assert str(e.value) == f'recording videos need imageio: {install_hint("video")}'


def test_eval_command_writes_one_video_per_episode(tmp_path, capsys):
    from stride.entry import serial_pipeline
    from stride.entry.cli import main
    from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config

    policy = serial_pipeline([main_config, create_config], seed=1, max_train_iter=5,
                             exp_name=str(tmp_path / "exp"), progress=False)
    videos = tmp_path / "videos"
    assert main(["-m", "eval", "--load", policy.result["exp_dir"], "--episodes", "5",
                 "--replay-path", str(videos)]) == 0
    assert f"episode videos under {videos}" in capsys.readouterr().out
    files = sorted(glob.glob(str(videos / "env*" / "*.mp4")))
    assert len(files) == 5
    (result,) = glob.glob(os.path.join(policy.result["exp_dir"], "eval", "*.json"))
    with open(result) as f:
        returns = json.load(f)["returns"]
    # CartPole's return is its length: each video holds the reset frame and one per step
    assert sorted(_frames(f).shape[0] - 1 for f in files) == sorted(int(r) for r in returns)


def test_subprocess_manager_records_in_its_workers(tmp_path):
    from functools import partial

    from stride.envs import create_env_manager

    manager = create_env_manager(dict(type="subprocess"),
                                 [partial(GymnasiumEnv, cfg=dict(env_id="CartPole-v1")) for _ in range(2)])
    manager.enable_save_replay(str(tmp_path))
    manager.seed(0)
    manager.launch()
    done = 0
    while done < 4:
        done += sum(ts.done for ts in manager.step({i: 0 for i in manager.ready_obs}).values())
    manager.close()
    files = sorted(os.path.relpath(f, tmp_path) for f in glob.glob(str(tmp_path / "*" / "*")))
    assert files[:2] == ["env0/episode0000.mp4", "env0/episode0001.mp4"] and "env1/episode0000.mp4" in files
    assert all(f.endswith(".mp4") for f in files)  # no temporaries


def test_an_env_that_cannot_record_says_so(tmp_path):
    from stride.testing.fake_envs import FakeEnv
    from stride.utils.errors import StrideError

    with pytest.raises(StrideError, match="FakeEnv does not record videos"):
        FakeEnv().enable_save_replay(str(tmp_path))


def _atari():
    pytest.importorskip("ale_py")
    pytest.importorskip("cv2")
    from stride.zoo.atari import AtariEnv

    return AtariEnv(cfg=dict(env_id="ALE/Breakout-v5", train=False, max_episode_steps=12)), (210, 160, 3), 15.0


def _mujoco():
    pytest.importorskip("mujoco")
    return GymnasiumEnv(cfg=dict(env_id="Hopper-v5", max_episode_steps=12)), (480, 480, 3), None


def _box2d():
    pytest.importorskip("Box2D")
    return GymnasiumEnv(cfg=dict(env_id="LunarLander-v3", max_episode_steps=12)), (400, 600, 3), None


def _minigrid():
    pytest.importorskip("minigrid")
    from stride.envs.minigrid_env import MiniGridEnv

    return MiniGridEnv(cfg=dict(env_id="MiniGrid-Empty-5x5-v0", max_episode_steps=12)), None, None


@pytest.mark.parametrize("make", [_atari, _mujoco, _box2d, _minigrid], ids=["atari", "mujoco", "box2d", "minigrid"])
def test_every_env_family_of_the_zoo_records_its_episodes(make, tmp_path):
    """Atari (through its preset, at the game's frame rate over the frame skip), MuJoCo, Box2D and
    MiniGrid: one mp4 per finished episode holding the reset frame and one rendered frame per step."""
    env, shape, fps = make()
    env.enable_save_replay(str(tmp_path))
    env.seed(0)
    env.reset()
    n = 0
    while not env.step(env.random_action()).done:
        n += 1
    env.close()
    (video,) = os.listdir(tmp_path)
    frames = _frames(str(tmp_path / video))
    assert frames.shape[0] == n + 2 and frames.ndim == 4 and frames.shape[-1] == 3
    assert shape is None or frames.shape[1:] == shape
    assert frames.std() > 0  # a picture, not a blank
    if fps is not None:
        assert iio.immeta(str(tmp_path / video), plugin="FFMPEG")["fps"] == fps


@pytest.mark.timeout(180)
def test_eval_replay_on_a_headless_machine_prints_no_sdl_errors(tmp_path):
    """Issue 28: ``-m eval --replay-path`` printed SDL's ``error: XDG_RUNTIME_DIR is invalid`` (and
    ALSA's lines): Gymnasium's pygame render calls ``pygame.init()``, whose video and audio probes
    fail without a display. A real command, with no display, runtime dir or SDL driver set."""
    import subprocess

    from stride.entry import serial_pipeline
    from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config

    policy = serial_pipeline([main_config, create_config], seed=1, max_train_iter=5,
                             exp_name=str(tmp_path / "exp"), progress=False)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "SDL_VIDEODRIVER", "SDL_AUDIODRIVER")}
    env["PYTHONPATH"] = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])
    out = subprocess.run([*STRIDE, "-m", "eval", "--load", policy.result["exp_dir"],
                          "--episodes", "2", "--replay-path", "videos"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=150)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "XDG_RUNTIME_DIR" not in out.stderr and "ALSA" not in out.stderr, out.stderr
    assert len(glob.glob(str(tmp_path / "videos" / "env*" / "*.mp4"))) == 2


def test_recording_a_classic_control_env_without_pygame_is_one_line(tmp_path, monkeypatch):
    """Issue 28: with only the [video] extra, recording CartPole failed at every reset with
    Gymnasium's DependencyNotInstalled (``pip install "gymnasium[classic-control]"``), retried and
    ended in a traceback; pygame is part of [video] now, and its absence is one line naming it."""
    monkeypatch.setitem(sys.modules, "pygame", None)
    env = GymnasiumEnv("CartPole-v1")
    env.enable_save_replay(str(tmp_path))
    with pytest.raises(MissingExtraError) as e:
        env.reset()
    assert str(e.value) == f'videos of classic-control envs need pygame: {install_hint("video")}'

