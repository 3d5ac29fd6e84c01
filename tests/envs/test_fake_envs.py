"""The fake envs behave as documented: deterministic, faults on the stated calls, unique keys."""

from __future__ import annotations

import time

import numpy as np
import pytest

from stride.testing import BurnGymEnv, FakeEnv, FakeEnvError, ImageGymEnv, fake_dict_space, make_gym_env
from stride.utils.errors import InvalidActionError


def _episode(env, seed, actions):
    obs = [np.array(env.reset(seed=seed))]
    for a in actions:
        ts = env.step(a)
        obs.append(np.array(ts.obs))
        if ts.done:
            break
    return obs


def test_deterministic_per_seed_and_keys_unique():
    a, b = FakeEnv(), FakeEnv()
    assert [o.tolist() for o in _episode(a, 3, [1, 2, 0] * 5)] == [o.tolist() for o in _episode(b, 3, [1, 2, 0] * 5)]
    assert _episode(a, 3, [1])[0].tolist() != _episode(a, 4, [1])[0].tolist()
    keys = set()
    for env in (a, b):
        env.reset(seed=1)
        for _ in range(5):
            keys.add(env.step(1).info["key"])
    assert len(keys) == 10  # two instances never share a key


def test_faults_fire_on_the_stated_calls(tmp_path):
    env = FakeEnv(step_error_every=3, max_len=100)
    env.reset(seed=0)
    env.step(0)
    env.step(0)
    with pytest.raises(FakeEnvError, match="call 3"):
        env.step(0)
    env = FakeEnv(reset_error_at=2, once_file=str(tmp_path / "f"))
    env.reset(seed=0)
    with pytest.raises(FakeEnvError):
        env.reset(seed=0)
    env2 = FakeEnv(reset_error_at=2, once_file=str(tmp_path / "f"))
    env2.reset(seed=0)
    env2.reset(seed=0)  # "once" holds across instances (and processes) through the file
    with pytest.raises(InvalidActionError, match="outside the action space"):
        env2.step(5)


def test_spaces_and_dtypes():
    d = FakeEnv(obs="dict")
    obs = d.reset(seed=0)
    assert d.observation_space == fake_dict_space()
    assert all(d.observation_space[k].contains(v) for k, v in obs.items())
    for dtype in ("uint8", "int64", "float16", "bool"):
        env = FakeEnv(dtype=dtype, shape=(2, 2))
        assert env.reset(seed=0).dtype == np.dtype(dtype)


def test_image_and_burn_envs():
    img = make_gym_env("image")
    assert img.reset(seed=0).shape == (4, 84, 84)
    ts = img.step(0)
    assert ts.obs.dtype == np.uint8 and ts.obs[0, 0, 0] == 1
    burn = BurnGymEnv(cpu_ms=2.0, max_len=3)
    burn.reset(seed=0)
    cpu = time.thread_time()
    for _ in range(3):
        *_, trunc, _ = burn.step(0)
    assert time.thread_time() - cpu >= 0.006  # CPU time, not wall-clock
    assert trunc
    assert ImageGymEnv(max_len=1).step(0)[3] is True
