"""FetchReach (Gymnasium-Robotics): the goal-dict env, its batched goal functions, HER's relabelled
rewards through them (hand-computed distances), the managers carrying its dict observations, and
SAC / DDPG + HER smoke runs from the command."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from stride.config import compile_config
from stride.envs.env_manager.base import create_env_manager
from stride.reward_model import create_reward_model
from stride.reward_model.her import relabel
from stride.utils.registry import ENV_REGISTRY

pytest.importorskip("gymnasium_robotics")

from stride.zoo.fetch import FetchEnv  # noqa: E402


def _fetch(**cfg):
    return FetchEnv(dict(cfg))


def test_env_gives_float32_goal_dicts_and_truncates_after_50_steps():
    env = ENV_REGISTRY.get("fetch")(cfg={})
    assert isinstance(env, FetchEnv) and env.env_id == "FetchReach-v4"
    env.seed(0)
    obs = env.reset()
    assert {k: (v.dtype, v.shape) for k, v in obs.items()} == {
        "observation": (np.float32, (10,)), "achieved_goal": (np.float32, (3,)), "desired_goal": (np.float32, (3,))}
    np.testing.assert_allclose(obs["achieved_goal"], obs["observation"][:3])  # the gripper position
    for t in range(50):
        ts = env.step(np.zeros(4, dtype=np.float32))
        expected = -float(np.linalg.norm(ts.obs["achieved_goal"] - ts.obs["desired_goal"]) > 0.05)
        assert ts.reward == pytest.approx(expected)
        assert ts.done == (t == 49)
    assert ts.info["truncated"] and not ts.info["terminated"] and "is_success" in ts.info
    env.close()


def test_goal_functions_are_batched_and_hand_checked():
    env = _fetch()
    achieved = np.zeros((3, 3), dtype=np.float32)
    # distances 0.05 (on the threshold: reached), 0.0566 (missed), 0 (reached)
    desired = np.array([[0.03, 0.04, 0.0], [0.04, 0.04, 0.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    np.testing.assert_array_equal(env.compute_reward(achieved, desired), [0.0, -1.0, 0.0])
    assert not np.asarray(env.compute_terminated(achieved, desired)).any()  # Fetch never terminates
    env.close()


def test_her_relabels_fetch_rewards_through_the_env_and_never_terminates():
    env = _fetch()
    her = create_reward_model(dict(type="her", her_strategy="future", her_replay_k=4), env=env, seed=0)
    # a 3-step episode by hand: the gripper moves along x by 0, 0.03, 0.07, 0.12 m; the goal is far away
    x = np.array([0.0, 0.03, 0.07, 0.12], dtype=np.float32)
    ag = np.stack([x, np.zeros(4, np.float32), np.zeros(4, np.float32)], axis=1)
    goal = np.full((3, 3), 1.0, dtype=np.float32)
    ep = {"obs": {"observation": np.zeros((3, 10), np.float32), "achieved_goal": ag[:-1], "desired_goal": goal},
          "next_obs": {"observation": np.zeros((3, 10), np.float32), "achieved_goal": ag[1:],
                       "desired_goal": goal.copy()},
          "action": np.zeros((3, 4), np.float32), "reward": np.full(3, -1.0, np.float32),
          "done": np.zeros(3, dtype=bool)}
    rows, goal_rows = np.array([0, 0, 1, 2]), np.array([0, 2, 2, 1])
    out = relabel(ep, rows, goal_rows, np.array([True, True, True, True]), env.compute_reward,
                  env.compute_terminated)
    # row 0, goal = its own next achieved (0.03): reached; row 0 vs 0.12: 0.09 away; row 1 (at 0.07) vs 0.12:
    # 0.05 away, reached; row 2 (at 0.12) vs 0.07: 0.05, reached
    np.testing.assert_array_equal(out["reward"], [0.0, -1.0, 0.0, 0.0])
    np.testing.assert_array_equal(out["done"], [False] * 4)
    np.testing.assert_allclose(out["obs"]["desired_goal"][:, 0], [0.03, 0.12, 0.12, 0.07])
    # HerRewardModel.estimate on the same episode: every relabelled reward agrees with the distance rule
    batch = her.estimate([ep] * 4)
    d = np.linalg.norm(batch["next_obs"]["achieved_goal"] - batch["next_obs"]["desired_goal"], axis=-1)
    np.testing.assert_array_equal(batch["reward"], -(d > 0.05).astype(np.float32))
    assert not batch["done"].any()
    env.close()


def _run(manager, steps=60):
    rng = np.random.default_rng(0)
    out = []
    for _ in range(steps):
        ready = manager.ready_obs
        actions = {i: rng.uniform(-1, 1, 4).astype(np.float32) for i in sorted(ready)}
        out.append({i: {k: v.copy() for k, v in ready[i].items()} for i in sorted(ready)})
        for i, ts in manager.step(actions).items():
            out.append((i, ts.reward, ts.done))
    return out


def test_subprocess_shared_memory_manager_carries_goal_dicts_like_the_base_one():
    def make():
        return FetchEnv({})

    ref = create_env_manager({"type": "base"}, [make, make])
    shm = create_env_manager({"type": "subprocess", "shared_memory": True}, [make, make])
    try:
        for m in (ref, shm):
            m.seed(3)
            m.launch()
        a, b = _run(ref), _run(shm)  # 60 steps: across an episode end and the managers' resets
        assert len(a) == len(b)
        for x, y in zip(a, b):
            if isinstance(x, dict):
                assert x.keys() == y.keys()
                for i in x:
                    assert {k: v.dtype for k, v in y[i].items()} == {k: np.float32 for k in x[i]}
                    for k in x[i]:
                        np.testing.assert_array_equal(x[i][k], y[i][k])
            else:
                assert x == y
    finally:
        ref.close()
        shm.close()


def test_zoo_configs_compile_and_are_found_by_the_command():
    from stride.entry.utils import zoo_config

    for policy, hidden in (("sac_her", [256, 256]), ("ddpg_her", [256, 256, 256])):
        main, create = zoo_config("fetchreach", policy)
        cfg = compile_config(main, create, save_cfg=False)
        assert cfg.env.type == "fetch" and cfg.policy.model.obs_shape == 13 and cfg.policy.discount_factor == 0.95
        assert list(cfg.policy.model.actor_hidden_size_list) == hidden
        assert cfg.reward_model.type == "her" and cfg.reward_model.her_replay_k == 4
        assert cfg.policy.eval.evaluator.metric == "success"


@pytest.mark.parametrize("policy", ["sac_her", "ddpg_her"])
def test_smoke_run_from_the_command(tmp_path, policy):
    """Random warm-up by whole episodes, HER batches of goal dicts, updates and a success evaluation."""
    from stride.entry.cli import main

    exp = tmp_path / "run"
    code = main(["-m", "serial", "-e", "fetchreach", "-p", policy, "-s", "0", "--env-step", "300",
                 "--exp-name", str(exp), "--no-progress",
                 "--set", "policy.random_collect_size=100", "--set", "policy.learn.update_per_collect=5",
                 "--set", "policy.learn.batch_size=32", "--set", "reward_model.sample_per_episode=16",
                 "--set", "policy.eval.evaluator.eval_freq_envstep=150", "--set", "env.n_evaluator_episode=4"])
    assert code in (0, None)
    result = json.loads((exp / "result.json").read_text())
    assert result["env_step"] >= 300 and result["train_iter"] > 0
    assert 0.0 <= result["eval_return"] <= 1.0  # a success rate, not a -50..0 return


def test_a_missing_robotics_extra_is_one_line(monkeypatch):
    from stride.utils.extras import MissingExtraError, install_hint
    from stride.zoo.fetch import register_fetch

    monkeypatch.setitem(sys.modules, "gymnasium_robotics", None)  # import gymnasium_robotics -> ModuleNotFoundError
    register_fetch.cache_clear()
    try:
        with pytest.raises(MissingExtraError) as info:
            FetchEnv({}).reset()
        assert str(info.value) == f'Fetch envs need gymnasium_robotics: {install_hint("robotics")}'
    finally:
        register_fetch.cache_clear()
