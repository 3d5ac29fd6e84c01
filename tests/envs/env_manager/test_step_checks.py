"""Every step and reset is checked, in every manager: a NaN or infinite reward or observation stops
the run with one line naming the env and the step (or, with ``nonfinite='drop'``, closes the
episode as abnormal like a crash, counted and logged); an observation of the wrong shape names the
expected and received shapes."""

from __future__ import annotations

import functools
import logging
import os
import subprocess
import textwrap
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from stride.envs import GymnasiumEnv, NonFiniteError, ObservationShapeError
from stride.envs.env_manager.checks import find_problem, make_step_check
from stride.utils.errors import ConfigError, StrideError
from tests.entry.stride_process import STRIDE

KINDS = ["base", "subprocess", "async_subprocess"]
ROOT = Path(__file__).resolve().parents[3]


class BadValueEnv(gym.Env):
    """Float32 (4,) observations; at step ``at`` of every episode (0: at reset) it returns ``bad``:
    'obs_nan', 'obs_inf', 'reward_nan', 'reward_inf', 'shape' or 'huge' (finite values whose
    squares overflow float32). Episodes last ``length`` steps."""

    def __init__(self, bad: str = "obs_nan", at: int = 3, length: int = 8, obs_dtype=np.float32, first_reset_only=False,
                 size: int = 4) -> None:
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(size,), dtype=obs_dtype)
        self._size = size
        self.action_space = gym.spaces.Discrete(2)
        self._bad, self._at, self._len, self._dtype = bad, at, length, obs_dtype
        self._first_reset_only = first_reset_only
        self._t = 0
        self._resets = 0

    def _obs(self, bad: bool):
        obs = np.full(self._size, self._t, dtype=self._dtype)
        if bad and self._bad == "obs_nan":
            obs[2] = np.nan
        elif bad and self._bad == "obs_inf":
            obs[1] = -np.inf
        elif bad and self._bad == "huge":
            obs[:] = np.finfo(self._dtype).max / 2
        elif bad and self._bad == "shape":
            obs = np.zeros(self._size + 1, dtype=self._dtype)
        return obs

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._t = 0
        self._resets += 1
        bad = self._at == 0 and (not self._first_reset_only or self._resets == 1)
        return self._obs(bad), {}

    def step(self, action):
        self._t += 1
        bad = self._t == self._at
        reward = 1.0
        if bad and self._bad == "reward_nan":
            reward = float("nan")
        elif bad and self._bad == "reward_inf":
            reward = np.float32(np.inf)
        return self._obs(bad), reward, False, self._t >= self._len, {"t": self._t}


def make_bad_env(**kwargs) -> GymnasiumEnv:
    return GymnasiumEnv(BadValueEnv(**kwargs))


def _fns(n: int, bad_env: int, **kwargs) -> list:
    """``n`` envs; only env ``bad_env`` misbehaves."""
    return [functools.partial(make_bad_env, **(kwargs if i == bad_env else dict(bad="none"))) for i in range(n)]


def _run(m, steps: int) -> list:
    out = []
    for _ in range(steps):
        out.append(m.step({i: 0 for i in m.ready_obs}))
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bad,what", [
    ("obs_nan", r"a non-finite observation\[2\] = nan \(1 of 4 values\)"),
    ("obs_inf", r"a non-finite observation\[1\] = -inf \(1 of 4 values\)"),
    ("reward_nan", r"a non-finite reward nan"),
    ("reward_inf", r"a non-finite reward inf"),
])
def test_a_nonfinite_value_stops_the_run_naming_env_and_step(make_manager, kind, bad, what):
    m = make_manager(kind, env_fns=_fns(3, 1, bad=bad, at=3))
    m.seed(0)
    m.launch()
    with pytest.raises(NonFiniteError, match=rf"^env 1 \(BadValueEnv\) returned {what} at episode step 3; "
                                             r"env\.manager\.nonfinite='drop' closes") as info:
        _run(m, 500)  # the async manager may return env 1 rarely
    assert isinstance(info.value, StrideError) and "\n" not in str(info.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_nonfinite_first_observation_stops_the_run_at_reset(make_manager, kind):
    m = make_manager(kind, env_fns=_fns(2, 0, bad="obs_nan", at=0))
    m.seed(0)
    with pytest.raises(NonFiniteError, match=r"^env 0 \(BadValueEnv\) returned a non-finite observation\[2\] = nan .* at reset;"):
        m.launch()


@pytest.mark.parametrize("kind", KINDS)
def test_drop_closes_the_episode_as_abnormal_counts_and_warns(make_manager, kind, caplog):
    m = make_manager(kind, env_fns=_fns(2, 1, bad="obs_nan", at=3, length=6), nonfinite="drop")
    m.seed(0)
    m.launch()
    caplog.set_level(logging.WARNING)
    per_env = {0: [], 1: []}
    for _ in range(2000):  # the async manager may return env 1 rarely
        for i, ts in m.step({i: 0 for i in m.ready_obs}).items():
            per_env[i].append(ts)
        if sum(1 for ts in per_env[1] if ts.info.get("abnormal")) >= 3:
            break
    bad = [ts for ts in per_env[1] if ts.info.get("abnormal")]
    assert len(bad) >= 3 and m.nonfinite_dropped >= len(bad)
    for ts in bad:
        assert ts.done and ts.obs is None
        assert "env 1 (BadValueEnv) returned a non-finite observation[2] = nan (1 of 4 values) at episode step 3" in ts.info["error"]
    # never stitched: after an abnormal end the env starts a new episode at t=1
    for prev, ts in zip(per_env[1], per_env[1][1:]):
        if prev.info.get("abnormal"):
            assert ts.info["t"] == 1
    assert all(not ts.info.get("abnormal") for ts in per_env[0])  # the healthy env never drops
    assert any("nonfinite='drop'" in r.getMessage() and "so far" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("kind", KINDS)
def test_drop_retries_a_reset_with_a_nonfinite_first_observation(make_manager, kind):
    m = make_manager(kind, env_fns=_fns(2, 1, bad="obs_nan", at=0, first_reset_only=True),
                     nonfinite="drop", max_retry=2, retry_waiting_time=0.0)
    m.seed(0)
    m.launch()
    assert m.nonfinite_dropped == 1
    assert sorted(m.ready_obs) == [0, 1] and np.isfinite(m.ready_obs[1]).all()


@pytest.mark.parametrize("kind", KINDS)
def test_ignore_passes_nonfinite_values_through(make_manager, kind):
    m = make_manager(kind, env_fns=_fns(1, 0, bad="obs_nan", at=2), nonfinite="ignore")
    m.seed(0)
    m.launch()
    second = _run(m, 2)[1][0]
    assert np.isnan(second.obs[2]) and m.nonfinite_dropped == 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("size", [4, 32])  # summed as Python floats / a float32 dot product that overflows
def test_huge_finite_values_are_no_false_alarm(make_manager, kind, size):
    m = make_manager(kind, env_fns=_fns(1, 0, bad="huge", at=2, size=size))
    m.seed(0)
    m.launch()
    second = _run(m, 3)[1][0]
    assert second.obs[0] == np.finfo(np.float32).max / 2


@pytest.mark.parametrize("size", [4, 32, (3, 5)])
def test_huge_float64_values_pass_the_cheap_check_or_the_exact_one(size):
    space = gym.spaces.Box(-np.inf, np.inf, shape=np.atleast_1d(size), dtype=np.float64)
    ok = make_step_check(space, True)
    huge = np.full(space.shape, np.finfo(np.float64).max / 2)
    # a short vector's sum overflows (a false suspicion, cleared exactly); the scaled dot product does not
    assert ok(huge, 0.0) is (size != 4)
    assert find_problem(space, huge, 0.0, True) is None
    huge.flat[-1] = np.inf
    assert not ok(huge, 0.0)
    huge.flat[0] = -np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # +inf and -inf together: the dot product warns; still caught
        assert not ok(huge, 0.0)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shm", [True, False])
def test_a_wrong_observation_shape_names_expected_and_received(make_manager, kind, shm):
    m = make_manager(kind, env_fns=_fns(2, 1, bad="shape", at=2), shared_memory=shm)
    m.seed(0)
    m.launch()
    with pytest.raises(ObservationShapeError, match=r"^env 1 \(BadValueEnv\) returned an observation of shape \(5,\) "
                                                    r"where the observation space Box\(.*\) has shape \(4,\)$"):
        _run(m, 500)  # the async manager may return env 1 rarely


def test_unknown_nonfinite_choice_is_refused(make_manager):
    with pytest.raises(ConfigError, match=r"unknown value 'skip' for config key 'env.manager.nonfinite'; valid choices: drop, ignore, raise"):
        make_manager("base", nonfinite="skip")


def test_integer_observations_get_no_value_check_but_the_reward_does():
    space = gym.spaces.Box(0, 255, shape=(2, 3), dtype=np.uint8)
    ok = make_step_check(space, True)
    obs = np.zeros((2, 3), np.uint8)
    assert ok(obs, 1.0) and ok(obs, 3)
    assert not ok(obs, float("nan"))
    assert find_problem(space, obs, float("nan"), True) == ("nonfinite", "a non-finite reward nan")
    floats = np.zeros((2, 3))
    floats[1, 2] = np.inf  # not what the space declares: looked at exactly
    assert not ok(floats, 1.0)
    assert find_problem(space, floats, 1.0, True) == ("nonfinite", "a non-finite observation[1, 2] = inf (1 of 6 values)")


def test_dict_observations_name_the_key():
    space = gym.spaces.Dict({"image": gym.spaces.Box(0, 255, (2, 2), np.uint8),
                             "vec": gym.spaces.Box(-np.inf, np.inf, (3,), np.float32)})
    ok = make_step_check(space, True)
    obs = {"image": np.zeros((2, 2), np.uint8), "vec": np.zeros(3, np.float32)}
    assert ok(obs, 0.0)
    obs["vec"][1] = np.nan
    assert not ok(obs, 0.0)
    assert find_problem(space, obs, 0.0, True) == ("nonfinite", "a non-finite observation['vec'][1] = nan (1 of 3 values)")
    assert find_problem(space, {"image": obs["image"]}, 0.0, True)[0] == "shape"


def test_other_spaces_get_the_exact_check():
    space = gym.spaces.Tuple((gym.spaces.Discrete(3), gym.spaces.Box(-1, 1, (2,), np.float32)))
    ok = make_step_check(space, True)
    assert ok((1, np.zeros(2, np.float32)), 0.5)
    bad = (1, np.array([0.0, np.nan], np.float32))
    assert not ok(bad, 0.5)
    assert find_problem(space, bad, 0.5, True) == ("nonfinite", "a non-finite observation[1][1] = nan (1 of 2 values)")


_NAN_CONFIG = """
import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleEnv


class NanCartPole(CartPoleEnv):
    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        self.t = getattr(self, "t", 0) + 1
        if self.t == 30:
            obs = obs.copy()
            obs[3] = np.nan
        return obs, reward, terminated, truncated, info


gym.register(id="NanCartPole-v0", entry_point=NanCartPole, max_episode_steps=500)

from stride.zoo.cartpole.config.cartpole_dqn_config import main_config, create_config

main_config["exp_name"] = "nan_cartpole"
main_config["env"]["env_id"] = "NanCartPole-v0"
main_config["env"]["collector_env_num"] = 2
main_config["env"]["evaluator_env_num"] = 2
"""


def test_the_stride_command_prints_one_line(tmp_path):
    (tmp_path / "nan_config.py").write_text(textwrap.dedent(_NAN_CONFIG))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([*STRIDE, "-m", "serial", "-c", "nan_config.py", "-s", "0", "--env-step", "2000"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 1, done.stderr  # the env failed at run time: not a usage error
    errors = [line for line in done.stderr.splitlines() if line.startswith("stride: error:")]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "(NanCartPole-v0) returned a non-finite observation[3] = nan (1 of 4 values) at episode step 30" in errors[0]
