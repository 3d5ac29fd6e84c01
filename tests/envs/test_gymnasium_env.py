"""GymnasiumEnv: truncation kept apart from termination, true final obs, returns, seeding, bad actions."""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import pytest

from stride.envs import BaseEnvManager, BaseEnvTimestep, GymnasiumEnv
from stride.utils.errors import ConfigError, InvalidActionError


def _run_episode(env: GymnasiumEnv, action: int = 0) -> list:
    out = []
    while True:
        ts = env.step(action)
        out.append(ts)
        if ts.done:
            return out


def test_truncation_is_not_termination_and_final_obs_is_true():
    env = GymnasiumEnv("CartPole-v1", cfg={"max_episode_steps": 10})
    env.seed(0)
    env.reset()
    # alternate actions keep the pole up for 10 steps -> time-limit truncation
    steps = []
    for t in range(10):
        steps.append(env.step(t % 2))
        if steps[-1].done:
            break
    last = steps[-1]
    assert isinstance(last, BaseEnvTimestep) and last.done and len(steps) == 10
    assert last.info["truncated"] is True and last.info["terminated"] is False
    assert last.info["eval_episode_return"] == pytest.approx(10.0)
    assert all(not s.done and "terminated" not in s.info for s in steps[:-1])
    first_next = env.reset()
    assert not np.array_equal(first_next, last.obs), "final obs must be the true final obs, not a reset obs"


def test_termination_flags_and_return():
    env = GymnasiumEnv("CartPole-v1")
    env.seed(3)
    env.reset()
    steps = _run_episode(env, action=0)  # always push left: falls quickly
    last = steps[-1]
    assert last.info["terminated"] is True and last.info["truncated"] is False
    assert last.info["eval_episode_return"] == pytest.approx(sum(s.reward for s in steps))


def test_float64_observations_become_float32():
    env = GymnasiumEnv("Pendulum-v1")
    assert env.observation_space.dtype == np.float32
    env.seed(0)
    assert env.reset().dtype == np.float32
    assert env.step(np.array([0.5], dtype=np.float32)).obs.dtype == np.float32


@pytest.mark.parametrize("bad", [2, -1, 7])
def test_discrete_action_outside_space_is_a_clear_error(bad):
    env = GymnasiumEnv("CartPole-v1")
    env.reset()
    with pytest.raises(InvalidActionError) as e:
        env.step(bad)
    msg = str(e.value)
    assert str(bad) in msg and "Discrete(2)" in msg and "0..1" in msg


def test_box_action_outside_bounds_or_shape_is_a_clear_error():
    env = GymnasiumEnv("Pendulum-v1")
    env.reset()
    with pytest.raises(InvalidActionError, match="outside the action space bounds"):
        env.step(np.array([5.0]))
    with pytest.raises(InvalidActionError, match="expected shape"):
        env.step(np.array([0.1, 0.2]))
    with pytest.raises(InvalidActionError, match="finite"):
        env.step(np.array([np.nan]))


def test_unknown_env_id_is_a_config_error():
    with pytest.raises(ConfigError, match="NoSuchEnv-v0"):
        GymnasiumEnv("NoSuchEnv-v0").reset()


def test_a_module_prefixed_id_is_made_as_gymnasium_make_makes_it(tmp_path, monkeypatch):
    """'my_pkg:MyEnv-v0' imports my_pkg (which registers MyEnv-v0) first, as gymnasium.make does."""
    (tmp_path / "stride_test_envs_pkg.py").write_text(
        "import gymnasium\n"
        "gymnasium.register(id='StridePkgCartPole-v0', "
        "entry_point='gymnasium.envs.classic_control.cartpole:CartPoleEnv', max_episode_steps=3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        env = GymnasiumEnv("stride_test_envs_pkg:StridePkgCartPole-v0")
        env.seed(0)
        env.reset()
        steps = [env.step(0) for _ in range(3)]
        assert steps[-1].done and steps[-1].info["truncated"] is True
        assert [t.done for t in steps[:2]] == [False, False]  # the registered 3-step limit applies
    finally:
        gym.registry.pop("StridePkgCartPole-v0", None)
        sys.modules.pop("stride_test_envs_pkg", None)


def test_wraps_an_env_instance_and_numpy_actions():
    env = GymnasiumEnv(gym.make("CartPole-v1"))
    env.seed(1)
    env.reset()
    for a in (np.int64(1), np.array(0), np.array([1])):
        assert isinstance(env.step(a), BaseEnvTimestep)


def test_seeding_dynamic_vs_fixed():
    def firsts(dynamic: bool) -> list:
        env = GymnasiumEnv("CartPole-v1")
        env.seed(5, dynamic_seed=dynamic)
        return [env.reset() for _ in range(3)]

    dyn, fixed = firsts(True), firsts(False)
    assert not np.array_equal(dyn[0], dyn[1])  # each episode its own seed
    assert all(np.array_equal(fixed[0], f) for f in fixed)  # DI semantics: every episode the same
    assert all(np.array_equal(a, b) for a, b in zip(dyn, firsts(True)))  # reproducible


def test_evaluator_manager_replays_the_same_distinct_episodes_at_every_reset():
    mgr = BaseEnvManager([lambda: GymnasiumEnv("CartPole-v1") for _ in range(2)])
    mgr.seed(0, dynamic_seed=False)
    mgr.launch()

    def episode_starts() -> list:
        starts = [mgr.ready_obs[0].copy()]
        while len(starts) < 3:
            ts = mgr.step({0: 0})[0]
            if ts.done:
                starts.append(mgr.ready_obs[0].copy())
        return starts

    first = episode_starts()
    mgr.reset()
    second = episode_starts()
    mgr.close()
    assert not np.array_equal(first[0], first[1]), "episodes within one evaluation must differ"
    assert all(np.array_equal(a, b) for a, b in zip(first, second)), "every evaluation replays the same episodes"


class _RecordingEnv(gym.Env):
    """Discrete(3, start=1) env that records the actions it receives."""

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(3, start=1)
        self.seen: list = []

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self.seen.append(action)
        return np.zeros(2, dtype=np.float32), 1.0, False, False, {}


def test_int_actions_reach_the_env_as_the_space_dtype_and_bad_ones_are_refused():
    raw = _RecordingEnv()
    env = GymnasiumEnv(raw)
    env.reset(seed=0)
    ts = env.step(2)
    assert type(ts) is BaseEnvTimestep and ts.done is False and ts.reward == 1.0
    env.step(np.int64(3))
    env.step(1)
    assert raw.seen == [2, 3, 1] and all(type(a) is np.int64 for a in raw.seen)
    for bad in (0, 4, True, 1.5, np.int64(-1)):
        with pytest.raises(InvalidActionError):
            env.step(bad)
    assert len(raw.seen) == 3  # refused actions never reach the env


def test_step_before_reset_is_refused_and_close_rearms_the_check():
    env = GymnasiumEnv("CartPole-v1")  # made without gymnasium's OrderEnforcing: Stride checks instead
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    assert env.step(np.int64(1)).done is False
    env.close()
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    assert env.step(0).done is False


class _SeedHungryEnv(gym.Env):
    """A user env whose reset uses the seed for more than np_random."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.offset = float(seed or 0)
        return np.array([self.offset + self.np_random.random()], np.float32), {}

    def step(self, action):
        return np.array([self.offset], np.float32), 0.0, True, False, {}


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1", "MountainCar-v0", "Acrobot-v1"])
def test_seeded_resets_are_gymnasiums_own(env_id):
    """reset(seed=s) goes through Gymnasium's public reset(seed=s): same episode, same np_random_seed."""
    seeds = [5, 0, 2**31 - 2, 77, 5, 123]
    env, ref = GymnasiumEnv(env_id), gym.make(env_id)
    for s in seeds:
        assert np.array_equal(env.reset(seed=s), np.float32(ref.reset(seed=s)[0]))
        assert env._make().unwrapped.np_random_seed == s
        for _ in range(20):
            a = ref.action_space.sample()
            ts = env.step(a)
            o, *_ = ref.step(a)
            assert np.array_equal(ts.obs, np.float32(o))
            if ts.done:
                break


def test_a_user_env_gets_the_seed_itself():
    env = GymnasiumEnv(_SeedHungryEnv())
    assert env.reset(seed=3)[0] >= 3.0


def test_manager_episodes_match_plain_gymnasium_resets():
    mgr = BaseEnvManager([lambda: GymnasiumEnv("CartPole-v1") for _ in range(2)])
    mgr.seed(11)
    mgr.launch()
    try:
        ref = gym.make("CartPole-v1")
        for _ in range(30):
            seeds = list(mgr._episode_seed)
            obs = dict(mgr.ready_obs)
            for i, o in obs.items():
                if mgr._episode_actions[i] == []:  # a fresh episode: its obs is reset(seed=its seed)
                    assert np.array_equal(o, np.float32(ref.reset(seed=seeds[i])[0]))
            mgr.step({i: 0 for i in obs})
    finally:
        mgr.close()


def test_evaluator_env_cfg_is_the_collectors_by_default():
    cfg = {"env_id": "CartPole-v1", "x": 1}
    out = GymnasiumEnv.evaluator_env_cfg(cfg)
    assert out == cfg and out is not cfg  # a copy the evaluator may change
