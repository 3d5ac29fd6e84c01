"""BitFlip: the env's dynamics, rewards and goal functions; DQN + HER learns a small BitFlip."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from stride.config import compile_config
from stride.utils.registry import ENV_REGISTRY
from stride.zoo.bitflip import BitFlipEnv, BitFlipGymEnv


def test_reset_step_reward_and_time_limit():
    env = BitFlipGymEnv(4)
    obs, _ = env.reset(seed=3)
    assert set(obs) == {"observation", "achieved_goal", "desired_goal"}
    assert obs["observation"].dtype == np.float32 and obs["observation"].shape == (4,)
    np.testing.assert_array_equal(obs["observation"], obs["achieved_goal"])
    assert not np.array_equal(obs["achieved_goal"], obs["desired_goal"])  # the goal differs from the start
    # flip exactly the differing bits: reward 1 and the end of the episode on the last one
    diff = np.flatnonzero(obs["observation"] != obs["desired_goal"]).tolist()
    for k, bit in enumerate(diff):
        before = obs["observation"].copy()
        obs, reward, terminated, truncated, info = env.step(bit)
        assert obs["observation"][bit] == 1 - before[bit] and np.delete(obs["observation"], bit).tolist() == \
            np.delete(before, bit).tolist()
        last = k == len(diff) - 1
        assert (reward, terminated, truncated, info["is_success"]) == (float(last), last, False, last)
    # an unsuccessful episode is truncated after n_bits steps, never terminated
    obs, _ = env.reset(seed=4)
    bit = int(np.flatnonzero(obs["observation"] == obs["desired_goal"])[0]) if (obs["observation"] == obs["desired_goal"]).any() else None
    if bit is None:  # every bit differs: flip bit 0 back and forth never reaches it (n_bits=4 > 1)
        bit = 0
    for step in range(4):
        obs, reward, terminated, truncated, _ = env.step(bit)
        assert reward == 0.0 and not terminated
        assert truncated == (step == 3)
    with pytest.raises(ValueError, match=r"action 4 is not a bit index in \[0, 4\)"):
        env.step(4)


def test_goal_functions_are_batched():
    env = BitFlipGymEnv(3)
    achieved = np.array([[1, 0, 1], [0, 0, 0]], dtype=np.float32)
    desired = np.array([[1, 0, 1], [0, 1, 0]], dtype=np.float32)
    np.testing.assert_array_equal(env.compute_reward(achieved, desired, {}), [1.0, 0.0])
    np.testing.assert_array_equal(env.compute_terminated(achieved, desired, {}), [True, False])


def test_stride_env_is_registered_and_reports_success_as_return():
    env = ENV_REGISTRY.get("bitflip")(cfg=dict(n_bits=2))
    assert isinstance(env, BitFlipEnv)
    env.seed(0)
    obs = env.reset()
    for bit in np.flatnonzero(obs["observation"] != obs["desired_goal"]).tolist():
        ts = env.step(bit)
    assert ts.done and ts.info["eval_episode_return"] == 1.0
    np.testing.assert_array_equal(env.compute_reward(ts.obs["achieved_goal"], ts.obs["desired_goal"]), 1.0)
    env.close()
    with pytest.raises(ValueError, match="n_bits must be an int >= 1, got 0"):
        BitFlipEnv(dict(n_bits=0))


def _small(n_bits):
    from stride.zoo.bitflip.config.bitflip_dqn_her_config import create_config, main_config

    main = copy.deepcopy(main_config)
    main["env"].update(n_bits=n_bits, collector_env_num=4, evaluator_env_num=4)
    main["policy"]["model"].update(obs_shape=2 * n_bits, action_shape=n_bits)
    main["policy"]["eval"]["evaluator"]["eval_freq_envstep"] = 1000
    return main, copy.deepcopy(create_config)


def test_zoo_configs_compile_and_are_found_by_the_command():
    from stride.entry.utils import zoo_config

    for policy, rm in (("dqn_her", {"type": "her", "her_strategy": "future", "her_replay_k": 4,
                                    "sample_per_episode": 4, "clear_buffer_per_iters": 0}), ("dqn", None)):
        main, create = zoo_config("bitflip", policy)
        cfg = compile_config(main, create, save_cfg=False)
        assert cfg.env.n_bits == 15 and cfg.policy.model.obs_shape == 30
        assert (cfg.get("reward_model") and cfg.reward_model.to_dict()) == rm


def test_dqn_her_learns_5_bits(tmp_path):
    from stride.entry import serial_pipeline_reward_model

    policy = serial_pipeline_reward_model(_small(5), seed=0, max_env_step=30_000, exp_name=str(tmp_path / "run"),
                                          progress=False)
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["stop"] is True, result  # 16-episode screen and 100-episode confirmation at >= 0.9 success
    assert policy.result["eval_return"] >= 0.9
