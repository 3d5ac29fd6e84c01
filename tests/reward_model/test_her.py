"""HER: relabelled goals, rewards and terminations against hand-computed values, per strategy."""

from __future__ import annotations

import numpy as np
import pytest

from stride.reward_model import HerRewardModel, create_reward_model
from stride.reward_model.her import goal_indices, relabel
from stride.utils.errors import ConfigError
from stride.zoo.bitflip import BitFlipGymEnv

# A 3-bit episode by hand: goal [1,1,1], states s0=[0,0,0] -a0-> s1=[1,0,0] -a1-> s2=[1,1,0] -a0-> s3=[0,1,0]
S = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], dtype=np.float32)
G = np.array([1, 1, 1], dtype=np.float32)


def _episode(states=S, goal=G):
    T = len(states) - 1
    goals = np.repeat(goal[None], T, 0)
    return {
        "obs": {"observation": states[:-1].copy(), "achieved_goal": states[:-1].copy(), "desired_goal": goals.copy()},
        "next_obs": {"observation": states[1:].copy(), "achieved_goal": states[1:].copy(), "desired_goal": goals.copy()},
        "action": np.array([0, 1, 0], dtype=np.int64)[:T],
        "reward": np.zeros(T, dtype=np.float32),
        "done": np.zeros(T, dtype=bool),
    }


ENV = BitFlipGymEnv(3)


def test_relabel_by_hand():
    ep = _episode()
    rows = np.array([0, 1, 2, 2])
    goal_rows = np.array([2, 1, 0, 0])
    relabelled = np.array([True, True, True, False])
    out = relabel(ep, rows, goal_rows, relabelled, ENV.compute_reward, ENV.compute_terminated)
    # row 0 with the final goal s3=[0,1,0]: reached s1=[1,0,0] -> not reached
    np.testing.assert_array_equal(out["obs"]["desired_goal"][0], [0, 1, 0])
    np.testing.assert_array_equal(out["next_obs"]["desired_goal"][0], [0, 1, 0])
    # row 1 with its own next goal s2=[1,1,0]: reached -> reward 1, terminal
    np.testing.assert_array_equal(out["obs"]["desired_goal"][1], [1, 1, 0])
    # row 2 with s1=[1,0,0] ('episode' may pick a past goal): reached s3=[0,1,0] -> 0
    np.testing.assert_array_equal(out["obs"]["desired_goal"][2], [1, 0, 0])
    np.testing.assert_array_equal(out["reward"], [0, 1, 0, 0])
    np.testing.assert_array_equal(out["done"], [False, True, False, False])
    # row 3 kept its goal; observations and actions are the rows'
    np.testing.assert_array_equal(out["obs"]["desired_goal"][3], G)
    np.testing.assert_array_equal(out["obs"]["observation"], S[[0, 1, 2, 2]])
    np.testing.assert_array_equal(out["action"], [0, 1, 0, 0])
    # the stored episode is untouched
    np.testing.assert_array_equal(ep["obs"]["desired_goal"], np.repeat(G[None], 3, 0))
    assert not ep["reward"].any()


def test_relabel_without_compute_terminated_keeps_done():
    ep = _episode()
    ep["done"][:] = [False, False, True]
    out = relabel(ep, np.array([1, 2]), np.array([1, 0]), np.array([True, True]), ENV.compute_reward)
    np.testing.assert_array_equal(out["reward"], [1, 0])
    np.testing.assert_array_equal(out["done"], [False, True])


def test_goal_indices_per_strategy():
    rng = np.random.default_rng(0)
    t = np.repeat(np.arange(5), 400)
    length = np.full(len(t), 5)
    np.testing.assert_array_equal(goal_indices("final", t, length, rng), np.full(len(t), 4))
    future = goal_indices("future", t, length, rng)
    for step in range(5):  # uniform over [t, T-1]: every value appears, none outside
        assert set(future[t == step].tolist()) == set(range(step, 5))
    episode = goal_indices("episode", t, length, rng)
    assert set(episode.tolist()) == set(range(5))
    with pytest.raises(ConfigError, match="unknown reward_model.her_strategy 'past'; valid choices: future, final, episode"):
        goal_indices("past", t, length, rng)


def _model(**cfg):
    return create_reward_model(dict(type="her", **cfg), env=ENV, seed=0)


@pytest.mark.parametrize("strategy", ["future", "final", "episode"])
def test_estimate_relabels_every_drawn_transition_with_a_goal_of_its_strategy(strategy):
    model = _model(her_strategy=strategy, her_replay_k=10**9, sample_per_episode=64)  # p(relabel) = 1 - 1e-9
    out = model.estimate([_episode()])
    assert len(out["action"]) == 64
    t = [int(np.flatnonzero((S[:-1] == o).all(1))[0]) for o in out["obs"]["observation"]]
    for i, step in enumerate(t):
        goal = out["obs"]["desired_goal"][i]
        j = int(np.flatnonzero((S[1:] == goal).all(1))[0])  # the step whose reached state is the goal
        allowed = {"final": {2}, "future": set(range(step, 3)), "episode": {0, 1, 2}}[strategy]
        assert j in allowed
        success = float(np.array_equal(S[step + 1], goal))
        assert out["reward"][i] == success and out["done"][i] == bool(success)
        np.testing.assert_array_equal(out["next_obs"]["desired_goal"][i], goal)


def test_k_zero_keeps_every_goal_and_k_sets_the_share():
    out = _model(her_replay_k=0, sample_per_episode=50).estimate([_episode(), _episode()])
    assert len(out["action"]) == 100
    assert (out["obs"]["desired_goal"] == G).all() and not out["reward"].any()
    # k=3: 3/4 of the drawn transitions get a new goal (all of the episode's goals differ from G)
    out = _model(her_replay_k=3, sample_per_episode=4000).estimate([_episode()])
    share = 1 - (out["obs"]["desired_goal"] == G).all(1).mean()
    assert abs(share - 0.75) < 0.03


def test_batch_items_and_state_round_trip():
    a, b = _model(sample_per_episode=4), _model(sample_per_episode=4)
    assert a.batch_items(128) == 32 and a.batch_items(130) == 33
    a.estimate([_episode()])
    b.load_state_dict(a.state_dict())
    x, y = a.estimate([_episode()]), b.estimate([_episode()])
    np.testing.assert_array_equal(x["obs"]["desired_goal"], y["obs"]["desired_goal"])


def test_bad_input_is_refused_by_name():
    with pytest.raises(ConfigError, match="needs an env with compute_reward"):
        HerRewardModel(dict(type="her"), env=object())
    with pytest.raises(ConfigError, match="her_strategy"):
        _model(her_strategy="past")
    with pytest.raises(TypeError, match="list of episodes as columns"):
        _model().estimate({"obs": 1})
    with pytest.raises(TypeError, match="list of episodes as columns"):  # transitions, not episodes
        _model().estimate([{"obs": {}, "action": 1}])
    bad = _episode()
    bad["obs"] = S[:-1]
    with pytest.raises(TypeError, match=r"keys \['observation', 'achieved_goal', 'desired_goal'\] in 'obs'"):
        _model().estimate([bad])
