"""Continuous actions leave a policy in the env's own units (policy.action_range, filled from the env's
action space: by the entries, or by compile_config(..., action_space=) for a user); learning keeps
[-1, 1] for squashed actors, which refuse to act without a range. A user who steps a plain Gymnasium
Pendulum with collect_mode / eval_mode output -- the seeds' customized main function -- gets the
full torque range and a SAC that learns."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
import torch

from stride.config import compile_config
from stride.envs.base_env import BaseEnvTimestep
from stride.policy import DDPGPolicy, PPOPolicy, SACPolicy, TD3Policy
from stride.policy.action_range import ActionScale, parse_action_range
from stride.utils.errors import ConfigError
from stride.worker import NaiveReplayBuffer
from stride.zoo.cartpole.config import cartpole_dqn_config
from stride.zoo.pendulum.config import (
    pendulum_ddpg_config, pendulum_ppo_config, pendulum_sac_config, pendulum_td3_config,
)


#: Pendulum-v1's action space (what a user hands compile_config: env.action_space)
PENDULUM = gym.spaces.Box(-2.0, 2.0, (1,), np.float32)


def _compile(zoo, seed: int = 0, action_space=PENDULUM):
    return compile_config(copy.deepcopy(zoo.main_config), create_cfg=copy.deepcopy(zoo.create_config), save_cfg=False,
                          seed=seed, action_space=action_space)


# ---- the map -----------------------------------------------------------------------------------
def test_scale_round_trip_clip_and_identity():
    s = ActionScale(parse_action_range([[-2.0, 0.0], [2.0, 10.0]], 2))
    unit = np.array([[-1.0, -1.0], [0.0, 0.5], [1.0, 1.0]], dtype=np.float32)
    env = s.to_env(unit)
    assert env.dtype == np.float32
    assert np.allclose(env, [[-2.0, 0.0], [0.0, 7.5], [2.0, 10.0]])
    assert np.allclose(s.from_env(env), unit, atol=1e-6)
    assert np.allclose(s.to_env(np.array([[1.5, -3.0]], dtype=np.float32)), [[2.0, 0.0]])  # never leaves the box
    assert np.allclose(s.from_env([3.0, 5.0]), [1.0, 0.0])
    unknown = ActionScale(None)  # no identity: that would act at a wrong scale, silently
    for method in (unknown.to_env, unknown.from_env):
        with pytest.raises(ConfigError, match=r"policy.action_range is None.*action_space=env.action_space"):
            method(unit)


@pytest.mark.parametrize("bad", [[1.0, -1.0], [0.0, 0.0], [-np.inf, 1.0], [[-1, -1, -1], [1, 1, 1]], 2.0, [1.0]])
def test_bad_ranges_are_one_line_config_errors(bad):
    with pytest.raises(ConfigError, match="policy.action_range"):
        parse_action_range(bad, 2)


# ---- filled from the action space given to compile_config ------------------------------------------
@pytest.mark.parametrize("zoo", [pendulum_sac_config, pendulum_td3_config, pendulum_ddpg_config, pendulum_ppo_config])
def test_compile_takes_the_range_from_the_action_space_given(zoo):
    assert _compile(zoo).policy.action_range == [[-2.0], [2.0]]
    unit = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)  # an env exposing [-1, 1] (act_scale=True)
    assert _compile(zoo, action_space=unit).policy.action_range == [[-1.0], [1.0]]
    assert _compile(zoo, action_space=None).policy.action_range is None  # none given: the compiler builds no env
    unbounded = gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)
    assert _compile(zoo, action_space=unbounded).policy.action_range is None
    main = copy.deepcopy(zoo.main_config)
    main["policy"]["action_range"] = [-2.0, 2.0]  # given: kept as given
    assert compile_config(main, create_cfg=zoo.create_config, save_cfg=False,
                          action_space=unit).policy.action_range == [-2.0, 2.0]
    assert "action_range" not in _compile(cartpole_dqn_config).policy  # discrete policies have none


@pytest.mark.parametrize("cls, zoo", [(SACPolicy, pendulum_sac_config), (TD3Policy, pendulum_td3_config),
                                      (DDPGPolicy, pendulum_ddpg_config)])
def test_a_squashed_policy_without_a_range_refuses_to_act(cls, zoo):
    """The seeds' way, compile_config without the env's action space: one line naming the fix, never
    actions in [-1, 1] (half a Pendulum's torque)."""
    policy = cls(_compile(zoo, action_space=None).policy)
    obs = {0: np.zeros(3, np.float32)}
    for act in (policy.collect_mode.forward, policy.eval_mode.forward):
        with pytest.raises(ConfigError, match=r"^policy.action_range is None.*compile_config\(\.\.\., "
                                              r"action_space=env.action_space\)") as info:
            act(obs)
        assert "\n" not in str(info.value)
    with pytest.raises(ConfigError, match="policy.action_range is None"):  # a user's random warm-up action
        policy.collect_mode.process_transition(obs[0], {"action": np.array([-2.0], np.float32)},
                                               BaseEnvTimestep(obs[0], -1.0, False, {}))


@pytest.mark.parametrize("cls, zoo", [(SACPolicy, pendulum_sac_config), (TD3Policy, pendulum_td3_config),
                                      (DDPGPolicy, pendulum_ddpg_config)])
def test_squashed_policies_hand_out_env_units_and_store_unit_actions(cls, zoo):
    torch.manual_seed(0)
    policy = cls(_compile(zoo).policy)
    obs = {i: np.random.default_rng(i).standard_normal(3).astype(np.float32) for i in range(64)}
    with torch.no_grad():  # push the actor's pre-tanh mean far out, so the greedy torques saturate
        for p in policy.model.actor.parameters():
            p.mul_(50.0)
    ev = np.stack([o["action"] for o in policy.eval_mode.forward(obs).values()])
    assert ev.min() < -1.9 and ev.max() > 1.9 and np.abs(ev).max() <= 2.0
    out = policy.collect_mode.forward(obs)
    ts = BaseEnvTimestep(obs[0], -1.0, False, {})
    stored = policy.collect_mode.process_transition(obs[0], out[0], ts)["action"]
    assert np.allclose(stored, out[0]["action"] / 2.0, atol=1e-6) and np.abs(stored).max() <= 1.0
    # a uniformly random warm-up action (env units) is stored the same way
    assert np.allclose(policy.collect_mode.process_transition(obs[0], {"action": np.array([-2.0], np.float32)}, ts)
                       ["action"], [-1.0])


def test_ppo_clips_to_the_env_range_without_a_flag():
    cfg = _compile(pendulum_ppo_config)
    cfg.policy.model.sigma_init = 5.0
    policy = PPOPolicy(cfg.policy)
    obs = {i: np.zeros(3, np.float32) for i in range(200)}
    actions = np.stack([o["action"] for o in policy.collect_mode.forward(obs).values()])
    assert np.abs(actions).max() <= 2.0 and (np.abs(actions) == 2.0).any()


# ---- the seeds' customized main function on a plain Gymnasium env --------------------------------
def _evaluate(policy, episodes: int, seed: int) -> float:
    env, returns = gym.make("Pendulum-v1"), []
    for k in range(episodes):
        obs, _ = env.reset(seed=seed + k)
        total, done = 0.0, False
        while not done:
            action = policy.eval_mode.forward({0: obs})[0]["action"]
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return float(np.mean(returns))


@pytest.mark.slow
@pytest.mark.learning
def test_sac_learns_on_a_plain_gymnasium_pendulum():
    """No Stride env wrapper, manager or collector: the user's own loop steps gymnasium's Pendulum with
    the policy's output (DI-engine's -- actions in [-1, 1] -- gets half the torque and stays near -700)."""
    env = gym.make("Pendulum-v1")
    cfg = _compile(pendulum_sac_config, seed=0, action_space=env.action_space)
    torch.manual_seed(0)
    policy = SACPolicy(cfg.policy)
    buffer = NaiveReplayBuffer(cfg.policy.other.replay_buffer, seed=0)
    env.action_space.seed(0)
    obs, _ = env.reset(seed=0)
    batch_size, warmup = cfg.policy.learn.batch_size, cfg.policy.random_collect_size
    for step in range(6000):
        if step < warmup:
            out = {"action": env.action_space.sample()}  # what a user's random warm-up hands the env
        else:
            out = policy.collect_mode.forward({0: obs})[0]
        next_obs, reward, terminated, truncated, _ = env.step(out["action"])
        timestep = BaseEnvTimestep(next_obs, reward, terminated or truncated,
                                   {"terminated": terminated, "truncated": truncated})
        buffer.push(policy.collect_mode.process_transition(obs, out, timestep))
        obs = env.reset()[0] if terminated or truncated else next_obs
        if step >= warmup:
            policy.learn_mode.forward(buffer.sample_batch(batch_size))
    assert _evaluate(policy, 100, seed=10_000) > -250  # -139 here; about -380 with the torque halved
