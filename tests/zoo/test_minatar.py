"""MinAtar zoo: the env (channel-first uint8 planes), and every config through serial_pipeline for a
few hundred env steps with its env and model as the config says (MinAtar conv encoder, uint8 obs in
the learner's batch). Needs ``minatar`` (extra ``[minatar]``; ``pip install --no-deps minatar``
is enough: its own dependencies only serve rendering); the rest runs without it."""

from __future__ import annotations

import copy
import importlib.util
import json

import numpy as np
import pytest
import torch

from stride.entry import serial_pipeline
from stride.envs import ChannelFirst, MinAtarEnv
from stride.entry.cli import main as cli_main
from stride.entry.utils import zoo_config, zoo_envs, zoo_policies
from stride.model.common import MinAtarEncoder
from stride.policy.batching import PolicyIO
from stride.utils.extras import MissingExtraError

needs_minatar = pytest.mark.skipif(importlib.util.find_spec("minatar") is None,
                                   reason='MinAtar smoke tests need minatar: pip install "stride-rl[minatar]"')

GAMES = {"minatar_breakout": ("MinAtar/Breakout-v1", 4, 3), "minatar_spaceinvaders": ("MinAtar/SpaceInvaders-v1", 6, 4)}
CONFIGS = [(env, algo) for env in GAMES for algo in ("dqn", "ppo")]


def test_the_zoo_names_the_minatar_envs():
    assert {"minatar_breakout", "minatar_spaceinvaders"} <= set(zoo_envs())
    # impala: tests/zoo/test_impala_configs.py; ppo_rnd: tests/zoo/test_minatar_rnd.py
    assert zoo_policies("minatar_breakout") == ["dqn", "impala", "ppo", "ppo_rnd"]
    assert zoo_policies("minatar_spaceinvaders") == ["dqn", "ppo"]


@needs_minatar
@pytest.mark.parametrize("env", list(GAMES))
def test_env_gives_channel_first_uint8_planes(env):
    env_id, channels, actions = GAMES[env]
    e = MinAtarEnv(cfg=dict(env_id=env_id))
    try:
        assert e.observation_space.shape == (channels, 10, 10) and e.observation_space.dtype == np.uint8
        assert e.action_space.n == actions
        obs = e.reset(seed=0)
        assert obs.dtype == np.uint8 and obs.shape == (channels, 10, 10) and set(np.unique(obs)) <= {0, 1}
        assert obs.flags.c_contiguous
        ts = e.step(e.random_action())
        assert ts.obs.dtype == np.uint8 and ts.obs.shape == (channels, 10, 10)
    finally:
        e.close()


@needs_minatar
def test_channel_first_matches_the_raw_planes():
    import gymnasium as gym

    from stride.envs.minatar_env import register_minatar

    register_minatar()
    raw = gym.make("MinAtar/Breakout-v1")
    wrapped = ChannelFirst(gym.make("MinAtar/Breakout-v1"))
    a, _ = raw.reset(seed=3)
    b, _ = wrapped.reset(seed=3)
    assert np.array_equal(np.transpose(a, (2, 0, 1)).astype(np.uint8), b)
    with pytest.raises(ValueError, match="ChannelFirst needs"):
        ChannelFirst(gym.make("CartPole-v1"))


def _small(main: dict, algo: str) -> dict:
    """The config's env and model as they are; only the budgets made small."""
    main = copy.deepcopy(main)
    main["env"].update(n_evaluator_episode=2, evaluator_env_num=2)
    if algo == "dqn":
        main["policy"]["random_collect_size"] = 64
    else:
        main["policy"]["collect"]["n_sample"] = 256
        main["policy"]["learn"]["batch_size"] = 64
    return main


@needs_minatar
@pytest.mark.parametrize("env,algo", CONFIGS)
def test_config_runs_with_the_conv_encoder_and_uint8_batches(env, algo, tmp_path, monkeypatch):
    main, create = zoo_config(env, algo)
    assert create["env"]["type"] == "minatar" and main["policy"]["model"]["encoder"] == "minatar"
    seen = []
    batch = PolicyIO.learn_batch

    def spy(self, data):
        out = batch(self, data)
        seen.append((out["obs"].dtype, tuple(out["obs"].shape[1:])))
        return out

    monkeypatch.setattr(PolicyIO, "learn_batch", spy)
    steps = 300 if algo == "dqn" else 512
    policy = serial_pipeline([_small(main, algo), create], seed=0, max_env_step=steps, exp_name=str(tmp_path / "run"),
                             progress=False)
    model = policy._model
    encoders = [m for m in model.modules() if isinstance(m, MinAtarEncoder)]
    assert encoders, f"{env} {algo}: no MinAtar conv encoder in {model}"
    channels = GAMES[env][1]
    assert seen and all(s == (torch.uint8, (channels, 10, 10)) for s in seen), seen
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["env_step"] >= steps


@needs_minatar
def test_the_command_runs_a_minatar_config(tmp_path, capsys):
    rc = cli_main(["-m", "serial", "-e", "minatar_breakout", "-p", "dqn", "-s", "0", "--env-step", "200",
                   "--set", "policy.random_collect_size=32", "--set", "env.n_evaluator_episode=1",
                   "--exp-name", str(tmp_path / "cli"), "--no-progress"])
    assert rc == 0, capsys.readouterr()


def test_missing_minatar_is_one_line(monkeypatch):
    import gymnasium as gym

    import stride.envs.minatar_env as minatar_env

    monkeypatch.setattr(minatar_env, "import_extra", _missing)
    monkeypatch.setattr(gym, "registry", {k: v for k, v in gym.registry.items() if not k.startswith("MinAtar/")})
    with pytest.raises(MissingExtraError, match=r'^MinAtar envs need minatar: pip install "stride-rl\[minatar\]"$'):
        MinAtarEnv(cfg=dict(env_id="MinAtar/Breakout-v1")).reset(seed=0)


def _missing(module: str, extra: str, what: str = ""):
    raise MissingExtraError(f'{what} need {module}: pip install "stride-rl[{extra}]"')
