"""stride.entry.utils in-process: config files, zoo lookup, space checks (the CLI's error sources)."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest

from stride.config import compile_config
from stride.entry.utils import (check_spaces, probe_spaces, read_config, resolve_resume, zoo_config, zoo_envs,
                                zoo_policies)
from stride.utils.errors import ConfigError
from stride.zoo.cartpole.config import cartpole_dqn_config as zoo


def test_read_config(tmp_path):
    p = tmp_path / "ok_config.py"
    p.write_text("main_config = dict(a=1)\ncreate_config = dict(policy=dict(type='dqn'))\n")
    assert read_config(str(p)) == ({"a": 1}, {"policy": {"type": "dqn"}})


@pytest.mark.parametrize("text,match", [
    ("main_config = dict()\n", r"must define main_config and create_config \(missing: create_config\)"),
    ("x = 1\n", r"missing: main_config, create_config"),
    ("main_config = dict(\n", r"is not valid Python \(line 1: "),
    ("raise RuntimeError('boom')\n", r"failed to run: RuntimeError: boom"),
])
def test_read_config_errors(tmp_path, text, match):
    p = tmp_path / "bad_config.py"
    p.write_text(text)
    with pytest.raises(ConfigError, match=match) as e:
        read_config(str(p))
    assert "bad_config.py" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ConfigError, match="does not exist"):
        read_config(str(tmp_path / "nope.py"))


def test_zoo_lookup():
    assert "cartpole" in zoo_envs() and "dqn" in zoo_policies("cartpole")
    main, create = zoo_config("cartpole", "dqn")
    assert main is zoo.main_config and create is zoo.create_config
    with pytest.raises(ConfigError, match=r"unknown env 'cartpol' \(did you mean 'cartpole'\?\); valid choices: "):
        zoo_config("cartpol", "dqn")
    with pytest.raises(ConfigError, match=r"unknown policy 'dqm' for env 'cartpole' \(did you mean 'dqn'\?\)"):
        zoo_config("cartpole", "dqm")


def test_zoo_lookup_finds_envs_inside_a_family():
    """``stride.zoo.minigrid.config.doorkey_ppo_config`` is ``-e doorkey -p ppo``; a policy name
    with an underscore stays whole (``cartpole_dqn_per`` -> ``dqn_per``)."""
    from stride.zoo.minigrid.config import doorkey_ppo_config

    assert {"doorkey", "empty"} <= set(zoo_envs()) and "minigrid" not in zoo_envs()
    assert zoo_config("doorkey", "ppo")[0] is doorkey_ppo_config.main_config
    assert {"dqn", "dqn_per"} <= set(zoo_policies("cartpole"))


class _Spaces:
    def __init__(self, obs, act):
        self.observation_space, self.action_space = obs, act


def _cfg(**model):
    main = copy.deepcopy(zoo.main_config)
    main["policy"]["model"].update(model)
    return compile_config(main, zoo.create_config, save_cfg=False)


def test_check_spaces():
    env = _Spaces(gym.spaces.Box(-1, 1, (4,), np.float32), gym.spaces.Discrete(2))
    check_spaces(_cfg(), env)
    with pytest.raises(ConfigError, match=r"action_shape=3 .*Discrete\(2\).*set it to 2"):
        check_spaces(_cfg(action_shape=3), env)
    with pytest.raises(ConfigError, match=r"obs_shape=5 .*set it to 4"):
        check_spaces(_cfg(obs_shape=5), env)
    image = _Spaces(gym.spaces.Box(0, 255, (3, 8, 8), np.uint8), gym.spaces.Discrete(2))
    check_spaces(_cfg(obs_shape=[3, 8, 8]), image)
    with pytest.raises(ConfigError, match=r"set it to \[3, 8, 8\]"):
        check_spaces(_cfg(obs_shape=[8, 8, 3]), image)


def test_check_spaces_fills_a_continuous_policys_range_from_the_env():
    """What the entries call on their env manager before they build the policy and save the config
    (the compiler builds no env): a range left None is the env's; a given one is kept and checked."""
    from stride.zoo.pendulum.config import pendulum_sac_config as pendulum

    obs = gym.spaces.Box(-8, 8, (3,), np.float32)
    cfg = compile_config(copy.deepcopy(pendulum.main_config), pendulum.create_config, save_cfg=False)
    assert cfg.policy.action_range is None
    check_spaces(cfg, _Spaces(obs, gym.spaces.Box(-2, 2, (1,), np.float32)))
    assert cfg.policy.action_range == [[-2.0], [2.0]]
    check_spaces(cfg, _Spaces(obs, gym.spaces.Box(-2, 2, (1,), np.float32)))  # filled: kept
    with pytest.raises(ConfigError, match=r"policy.action_range=.* does not match the env's action space"):
        check_spaces(cfg, _Spaces(obs, gym.spaces.Box(-1, 1, (1,), np.float32)))


def test_probe_spaces_builds_the_configs_env_manager():
    from stride.zoo.pendulum.config import pendulum_td3_config as pendulum

    main = copy.deepcopy(pendulum.main_config)
    main["env"]["act_scale"] = True  # the env exposes [-1, 1]
    cfg = compile_config(main, pendulum.create_config, save_cfg=False)
    probe_spaces(cfg)
    assert cfg.policy.action_range == [[-1.0], [1.0]]


def test_resolve_resume_errors(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_resume(str(tmp_path / "nothing"))
    (tmp_path / "exp").mkdir()
    with pytest.raises(ConfigError, match="no checkpoint"):
        resolve_resume(str(tmp_path / "exp"))
    (tmp_path / "exp" / "ckpt").mkdir()
    (tmp_path / "exp" / "ckpt" / "ckpt_latest.txt").write_text("iteration_3.pth.tar\n")
    with pytest.raises(ConfigError, match="total_config.json"):
        resolve_resume(str(tmp_path / "exp"))
    (tmp_path / "exp" / "total_config.json").write_text("{}")
    exp, ckpt = resolve_resume(str(tmp_path / "exp"))
    assert exp == str(tmp_path / "exp") and ckpt.endswith("iteration_3.pth.tar")


def test_zoo_lookup_of_a_missing_family_is_empty():
    assert zoo_policies("no_such_family") == []
    with pytest.raises(ConfigError, match=r"unknown env 'no_such_family'"):
        zoo_config("no_such_family", "dqn")


@pytest.mark.parametrize("second", ["SIGINT", "SIGTERM"])
def test_a_second_signal_aborts_at_once_named_by_that_signal(second):
    """The first signal asks for a checkpoint; the second raises at once, named by that signal, so the
    command's exit code is the second signal's (130 for SIGINT, 143 for SIGTERM), as for a signal
    outside the loop."""
    import os
    import signal

    from stride.entry.run_state import EXIT_CODES
    from stride.entry.utils import Interrupt

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt) as aborted:
        with Interrupt() as interrupt:
            os.kill(os.getpid(), signal.SIGTERM)
            assert interrupt.requested and interrupt.signal_name == "SIGTERM"
            os.kill(os.getpid(), getattr(signal, second))
    assert str(aborted.value) == second
    assert EXIT_CODES[str(aborted.value)] == {"SIGINT": 130, "SIGTERM": 143}[second]
    assert signal.getsignal(signal.SIGTERM) is before  # the handlers are put back
