"""Typing of stride.envs / stride.testing: the public signatures stay clear of Any (issue 14), and
the generic envs, timesteps and managers are what they say at run time too."""

from __future__ import annotations

import importlib.util
import os

import numpy as np

from stride.envs import AsyncSubprocessEnvManager, BaseEnv, BaseEnvManager, BaseEnvTimestep, GymnasiumEnv, SyncSubprocessEnvManager
from stride.envs.base_env import ActT, ObsT
from stride.testing.fake_envs import FakeEnv, ImageGymEnv

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools", "any_count.py")


def _any_count():
    spec = importlib.util.spec_from_file_location("any_count", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_at_most_2_percent_of_the_public_signatures_use_any():
    total, n_any, names = _any_count().count(["stride.envs", "stride.testing"])
    assert total > 100
    assert n_any <= 0.02 * total, names


def test_type_parameters_default_to_object():
    assert ObsT.__default__ is object and ActT.__default__ is object


def test_generic_classes_subscript_and_stay_plain_at_run_time():
    for cls in (BaseEnv, GymnasiumEnv, BaseEnvManager, SyncSubprocessEnvManager, AsyncSubprocessEnvManager):
        assert cls[np.ndarray, int].__origin__ is cls
    ts = BaseEnvTimestep[np.ndarray](np.zeros(2), 1.0, False, {})
    assert type(ts) is BaseEnvTimestep and ts == tuple.__new__(BaseEnvTimestep, (ts.obs, 1.0, False, {}))


def test_typed_envs_step_as_before():
    env = GymnasiumEnv(ImageGymEnv(max_len=3))
    env.seed(0)
    assert env.reset().shape == (4, 84, 84)
    ts = env.step(1)
    assert (ts.reward, ts.done) == (1.0, False)
    fake = FakeEnv(obs="dict")
    fake.seed(0)
    obs = fake.reset(offset=np.int64(2))
    assert isinstance(obs, dict) and fake.step(1).reward == 1.0
