"""Agent-keyed observations (AgentDict) through shared memory and the step checks: any subset of
agents per slot, per-agent rewards, one-line errors naming the agent."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from stride.envs import AgentDict
from stride.envs.env_manager.checks import find_problem, make_step_check
from stride.envs.env_manager.shm import ObsBlock, obs_layout

BOARD = gym.spaces.Dict({"observation": gym.spaces.Box(0, 1, (3, 3, 2), np.int8),
                         "action_mask": gym.spaces.Box(0, 1, (9,), np.int8)})
SPACE = AgentDict({"p1": BOARD, "p2": BOARD})
VEC = AgentDict({"a": gym.spaces.Box(-np.inf, np.inf, (4,), np.float32), "b": gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)})


def _board(k):
    return {"observation": np.full((3, 3, 2), k % 2, np.int8), "action_mask": np.arange(9, dtype=np.int8) % 2}


def test_a_slot_holds_any_subset_of_the_agents():
    block = ObsBlock(obs_layout(SPACE), 3)
    try:
        block.write(0, {"p1": _board(1)})
        block.write(1, {"p1": _board(0), "p2": _board(1)})
        block.write(2, {})
        got = block.read_all()
        assert list(got[0]) == ["p1"] and list(got[1]) == ["p1", "p2"] and got[2] == {}
        assert np.array_equal(got[1]["p2"]["observation"], _board(1)["observation"])
        assert got[0]["p1"]["action_mask"].dtype == np.int8
        block.write(0, {"p2": _board(0)})  # the flag of an agent that is gone is cleared
        assert list(block.read(0)) == ["p2"]
        with pytest.raises(ValueError, match=r"observation \['p3'\] does not fit the AgentDict observation space agents"):
            block.write(0, {"p3": _board(0)})
        with pytest.raises(ValueError, match=r"observation\['p1'\]\['observation'\] of shape \(2,\)"):
            block.write(0, {"p1": {"observation": np.zeros(2), "action_mask": np.zeros(9)}})
    finally:
        block.close()


def test_vector_agents_share_memory_too():
    block = ObsBlock(obs_layout(VEC), 1)
    block.write(0, {"b": np.arange(4, dtype=np.float32)})
    assert list(block.read(0)) == ["b"] and block.read(0)["b"].tolist() == [0, 1, 2, 3]
    block.close()
    assert obs_layout(AgentDict({"a": gym.spaces.Discrete(3)})) is None  # no fixed numeric layout: the pipe


def test_step_checks_take_per_agent_rewards_and_name_the_agent():
    ok = make_step_check(VEC, True)
    good = {"a": np.zeros(4, np.float32)}
    assert ok(good, {"a": 1.0, "b": -2.0}) and ok({}, {}) and ok(good, 0.0)
    assert not ok(good, {"a": float("nan")})
    assert find_problem(VEC, good, {"a": float("nan")}, True) == ("nonfinite", "(agent 'a') a non-finite reward nan")
    assert find_problem(VEC, {}, {"b": float("inf")}, True) == ("nonfinite", "a non-finite reward {'b': inf}")
    bad = {"a": np.array([0, np.inf, 0, 0], np.float32)}
    assert not ok(bad, {"a": 0.0})
    assert find_problem(VEC, bad, {"a": 0.0}, True)[1].startswith("(agent 'a') a non-finite observation[1] = inf")
    assert not ok({"c": np.zeros(4, np.float32)}, {})
    assert find_problem(VEC, {"c": np.zeros(4, np.float32)}, {}, True)[0] == "shape"
    assert find_problem(VEC, {"b": np.zeros(3, np.float32)}, {}, True)[1].startswith("(agent 'b') an observation of shape (3,)")
    assert SPACE.contains({"p1": BOARD.sample()}) and not SPACE.contains({"x": BOARD.sample()})
