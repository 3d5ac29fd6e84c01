"""``MiniGridEnv`` (``obs_type`` 'flat' / 'image') and the MiniGrid zoo configs: a smoke run of each."""

from __future__ import annotations

import copy
import importlib
import sys

import numpy as np
import pytest

from stride.envs import MiniGridEnv
from stride.utils.errors import ConfigError
from stride.utils.extras import MissingExtraError, install_hint

minigrid = pytest.importorskip("minigrid")

IDS = ["MiniGrid-DoorKey-5x5-v0", "MiniGrid-Empty-8x8-v0"]


def _raw_view(env_id: str, seed: int):
    import gymnasium as gym

    env = gym.make(env_id)
    obs, _ = env.reset(seed=seed)
    return obs


@pytest.mark.parametrize("env_id", IDS)
def test_flat_is_the_one_hot_of_the_view_and_direction(env_id):
    env = MiniGridEnv(cfg=dict(env_id=env_id))  # obs_type='flat' is the default
    obs = env.reset(seed=3)
    raw = _raw_view(env_id, 3)
    assert env.observation_space.shape == (984,) and obs.dtype == np.float32 and obs.shape == (984,)
    assert env.observation_space.contains(obs)
    cells = obs[:-4].reshape(49, 20)
    image = raw["image"].reshape(49, 3)
    assert (cells.sum(axis=1) == 3).all()  # one object, one colour, one state per cell
    assert (cells[:, :11].argmax(1) == image[:, 0]).all()
    assert (cells[:, 11:17].argmax(1) == image[:, 1]).all()
    assert (cells[:, 17:].argmax(1) == image[:, 2]).all()
    assert obs[-4:].argmax() == raw["direction"] and obs[-4:].sum() == 1
    env.close()


def test_image_is_the_view_channel_first_uint8():
    env = MiniGridEnv(cfg=dict(env_id=IDS[0], obs_type="image"))
    obs = env.reset(seed=5)
    assert env.observation_space.shape == (3, 7, 7) and obs.dtype == np.uint8
    assert (obs == _raw_view(IDS[0], 5)["image"].transpose(2, 0, 1)).all()
    ts = env.step(2)  # forward
    assert ts.obs.shape == (3, 7, 7) and ts.obs.flags["C_CONTIGUOUS"]
    env.close()


def test_an_episode_ends_with_minigrids_time_limit_as_truncation():
    env = MiniGridEnv(cfg=dict(env_id=IDS[0], max_episode_steps=20))
    env.seed(0)
    env.reset()
    n = 0
    while True:
        n += 1
        ts = env.step(0)  # turning left forever never reaches the goal
        if ts.done:
            break
    assert n == 20 and ts.info["truncated"] and not ts.info["terminated"] and ts.info["eval_episode_return"] == 0.0


def test_unknown_obs_type_is_a_config_error():
    with pytest.raises(ConfigError, match="obs_type"):
        MiniGridEnv(cfg=dict(env_id=IDS[0], obs_type="rgb"))


def test_a_missing_minigrid_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "minigrid", None)
    with pytest.raises(MissingExtraError) as e:
        MiniGridEnv(cfg=dict(env_id=IDS[0])).reset()
    assert str(e.value) == f'MiniGrid envs need minigrid: {install_hint("minigrid")}'


@pytest.mark.parametrize("env, policy", [("doorkey", "ppo"), ("empty", "ppo")])
def test_zoo_config_smoke_run(env, policy, tmp_path):
    """A few hundred steps of the config as the command finds it, its env and model wired as it says."""
    from stride.entry import serial_pipeline_onpolicy
    from stride.entry.utils import zoo_config

    main, create = zoo_config(env, policy)
    assert main is importlib.import_module(f"stride.zoo.minigrid.config.{env}_{policy}_config").main_config
    main = copy.deepcopy(main)
    main["env"].update(collector_env_num=2, evaluator_env_num=2, n_evaluator_episode=2)
    main["policy"]["collect"]["n_sample"] = 128
    main["policy"]["learn"]["epoch_per_collect"] = 1
    trained = serial_pipeline_onpolicy([main, create], seed=0, max_env_step=300, exp_name=str(tmp_path / "exp"),
                                       progress=False)
    r = trained.result
    assert r["env_step"] >= 300 and r["train_iter"] >= 3 and r["eval_return"] is not None
