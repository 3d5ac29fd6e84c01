"""PettingZooEnv (AEC and parallel) and MultiAgentManager over every env manager, with a worker
SIGKILLed mid-episode. Needs the ``[multiagent]`` extra (pettingzoo, mpe2)."""

from __future__ import annotations

import functools
import os
import signal
import time

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from stride.envs import (AgentDict, AsyncSubprocessEnvManager, BaseEnvManager, MultiAgentManager, PettingZooEnv,
                         SyncSubprocessEnvManager)
from stride.zoo.pettingzoo.board_rules import random_opponent, win_block_opponent
from stride.utils.errors import ConfigError, InvalidActionError, StrideError
from stride.utils.extras import MissingExtraError
from tests.envs.pettingzoo_fakes import make_relay, make_relay_aec, make_tictactoe
from tests.envs.tests_envs_helpers import gone, worker_children

TICTACTOE = "pettingzoo.classic.tictactoe_v3"
MANAGERS = {"base": BaseEnvManager, "subprocess": SyncSubprocessEnvManager, "async_subprocess": AsyncSubprocessEnvManager}


def _legal(obs, rng):
    return int(rng.choice(np.flatnonzero(obs["action_mask"])))


def _play(env, rng):
    """One episode of random legal moves; returns the timesteps."""
    obs = env.reset(seed=int(rng.integers(1000)))
    out = []
    while True:
        ts = env.step({a: _legal(o, rng) for a, o in obs.items()})
        out.append(ts)
        if ts.done:
            return out
        obs = ts.obs


# ---- the env ---------------------------------------------------------------------------------------
def test_aec_game_against_an_opponent_shows_only_the_learners_turns():
    env = PettingZooEnv(cfg=dict(env_id=TICTACTOE, opponent="random"))
    assert isinstance(env.observation_space, AgentDict) and env.agents == ["player_1"]
    rng = np.random.default_rng(0)
    results = []
    for _ in range(30):
        steps = _play(env, rng)
        for ts in steps[:-1]:
            assert list(ts.obs) == ["player_1"] and ts.reward == {"player_1": 0.0} and ts.info["agents"] == {}
            assert ts.obs["player_1"]["observation"].dtype == np.int8
        last = steps[-1]
        end = last.info["agents"]["player_1"]
        assert last.obs == {} and end["terminated"] and not end["truncated"]
        assert last.reward["player_1"] == end["eval_episode_return"] == last.info["eval_episode_return"]["player_1"]
        results.append(end["eval_episode_return"])
    assert set(results) <= {-1.0, 0.0, 1.0} and 1.0 in results
    env.close()


def test_aec_self_play_ends_each_transition_at_the_movers_next_turn():
    env = PettingZooEnv(make_tictactoe)
    assert env.agents == ["player_1", "player_2"]
    rng = np.random.default_rng(1)
    obs = env.reset(seed=3)
    assert list(obs) == ["player_1"]
    ts = env.step({"player_1": _legal(obs["player_1"], rng)})
    assert list(ts.obs) == ["player_2"] and ts.reward == {}  # player_1's transition waits for its next turn
    movers = ["player_1", "player_2"]
    while not ts.done:
        mover = next(iter(ts.obs))
        other = movers[1 - movers.index(mover)]
        nxt = env.step({mover: _legal(ts.obs[mover], rng)})
        assert other in nxt.reward  # the previous mover's transition ends now
        ts = nxt
    returns = ts.info["eval_episode_return"]
    assert set(ts.info["agents"]) == {"player_1", "player_2"} and sum(returns.values()) == 0.0
    assert all(end["terminated"] for end in ts.info["agents"].values())


@pytest.mark.parametrize("make", [make_relay, make_relay_aec], ids=["parallel", "aec"])
def test_agents_that_leave_mid_episode_end_their_own_stream(make):
    env = PettingZooEnv(make)
    obs = env.reset(seed=5)
    ends, steps = {}, 0
    while True:
        ts = env.step({a: 1 for a in obs})
        steps += 1
        for agent, end in ts.info["agents"].items():
            ends[agent] = (steps, end["terminated"], end["truncated"], end["eval_episode_return"], end["final_obs"])
            assert agent not in ts.obs
        if ts.done:
            break
        obs = ts.obs
    if make is make_relay:  # every live agent acts each step: a0 leaves at step 2, a1 at 3, a2 (truncated) at 5
        assert {a: e[:4] for a, e in ends.items()} == {"a0": (2, True, False, 4.0), "a1": (3, True, False, 6.0),
                                                       "a2": (5, False, True, 10.0)}
    else:  # one agent per step: the same episode, ends reported as each agent's turn comes
        assert {a: e[1:4] for a, e in ends.items()} == {"a0": (True, False, 4.0), "a1": (True, False, 6.0),
                                                        "a2": (False, True, 10.0)}
    assert ts.info["truncated"] and not ts.info["terminated"]
    assert ts.info["eval_episode_return"] == {"a0": 4.0, "a1": 6.0, "a2": 10.0}


def test_parallel_mpe_truncates_every_agent_apart_from_termination():
    pytest.importorskip("mpe2")
    env = PettingZooEnv(cfg=dict(env_id="mpe2.simple_spread_v3", env_kwargs=dict(max_cycles=4)))
    obs = env.reset(seed=0)
    assert list(obs) == ["agent_0", "agent_1", "agent_2"] and obs["agent_0"].shape == (18,)
    for t in range(4):
        ts = env.step({a: 0 for a in obs})
        obs = ts.obs
    assert ts.done and set(ts.info["agents"]) == {"agent_0", "agent_1", "agent_2"}
    assert all(e["truncated"] and not e["terminated"] for e in ts.info["agents"].values())
    with pytest.raises(ConfigError, match=r"opening_plies=2 plays random moves of a turn-based game; .* valid choices: opening_plies=0"):
        PettingZooEnv(cfg=dict(env_id="mpe2.simple_spread_v3", opening_plies=2)).reset(seed=0)


def test_masks_are_enforced_and_random_legal_play_never_breaks_them():
    env = PettingZooEnv(cfg=dict(env_id="pettingzoo.classic.connect_four_v3", opponent="win_block"))
    rng = np.random.default_rng(2)
    for _ in range(40):  # ~800 moves of both sides, all legal
        _play(env, rng)
    obs = env.reset(seed=1)
    env.step({"player_0": 3})
    for _ in range(3):  # fill column 3 (the opponent's replies land elsewhere or on top)
        obs = env.step({"player_0": 3}).obs if 3 in np.flatnonzero(obs["player_0"]["action_mask"]) else obs
    mask = env.step({"player_0": 0}).obs["player_0"]["action_mask"]
    full = [a for a in range(7) if not mask[a]]
    if full:
        with pytest.raises(InvalidActionError, match=r"action \d of 'player_0' is not legal now; legal actions: \["):
            env.step({"player_0": full[0]})
    with pytest.raises(InvalidActionError, match=r"but the agents to act are \['player_0'\]"):
        env.step({"player_1": 0})
    env.close()


def test_the_rule_opponent_wins_then_blocks():
    rng = np.random.default_rng(0)
    board = np.zeros((3, 3, 2), dtype=np.int8)
    board[0, 0, 0] = board[0, 1, 0] = 1  # mine: (0,0), (0,1) -> cell 2 wins
    board[1, 0, 1] = board[1, 1, 1] = 1  # theirs: (1,0), (1,1) -> cell 5 blocks
    mask = (board.sum(-1) == 0).reshape(-1).astype(np.int8)
    assert win_block_opponent({"observation": board, "action_mask": mask}, rng) == 2
    board[0, 1, 0] = 0
    mask = (board.sum(-1) == 0).reshape(-1).astype(np.int8)
    assert win_block_opponent({"observation": board, "action_mask": mask}, rng) == 5
    c4 = np.zeros((6, 7, 2), dtype=np.int8)
    c4[5, 0:3, 1] = 1  # theirs: three on the bottom row -> column 3 blocks
    assert win_block_opponent({"observation": c4, "action_mask": np.ones(7, np.int8)}, rng) == 3
    assert random_opponent({"observation": c4, "action_mask": np.eye(7, dtype=np.int8)[4]}, rng) == 4


def test_the_rule_opponent_beats_the_random_one_in_real_games():
    rng = np.random.default_rng(3)
    env = PettingZooEnv(cfg=dict(env_id=TICTACTOE, opponent="win_block"))
    returns = [_play(env, rng)[-1].info["eval_episode_return"]["player_1"] for _ in range(60)]
    assert np.mean(returns) < 0.0  # a random learner loses to it on average


def test_random_openings_start_undecided_games_the_episode_seed_repeats():
    """``opening_plies``: 0..k random legal moves before anyone plays, none of which ends the game."""
    env = PettingZooEnv(cfg=dict(env_id="pettingzoo.classic.connect_four_v3", opening_plies=12))
    stones = []
    for seed in range(200):
        obs = env.reset(seed=seed)
        (agent, o), = obs.items()
        board = o["observation"]
        stones.append(int(board.sum()))
        assert agent == ("player_0" if stones[-1] % 2 == 0 else "player_1")  # the mover follows the plies played
        assert int(board[..., 0].sum()) - int(board[..., 1].sum()) == (0 if agent == "player_0" else -1)
        again = env.reset(seed=seed)
        assert np.array_equal(again[agent]["observation"], board)  # the seed decides the opening
    assert set(stones) == set(range(13))  # every length, 0 (the initial position) to 12
    steps = _play(env, np.random.default_rng(0))
    assert steps[-1].done
    env.close()
    # on tic-tac-toe 5 plies can win: an opening that would is stopped one move short
    ttt = PettingZooEnv(cfg=dict(env_id=TICTACTOE, opening_plies=9))
    for seed in range(200):
        obs = ttt.reset(seed=seed)
        assert obs and 0 <= int(next(iter(obs.values()))["observation"].sum()) <= 8
    ttt.close()


def test_bad_input_is_one_line():
    with pytest.raises(ConfigError, match="unknown opponent .best.*valid choices: random, win_block"):
        PettingZooEnv(cfg=dict(env_id=TICTACTOE, opponent="best")).reset(seed=0)
    with pytest.raises(ConfigError, match="opponent_agent 'p3' is not an agent of .*valid choices: player_1, player_2"):
        PettingZooEnv(cfg=dict(env_id=TICTACTOE, opponent="random", opponent_agent="p3")).reset(seed=0)
    with pytest.raises(ConfigError, match="env_id 'pettingzoo.classic.nogame' is not a PettingZoo env module"):
        PettingZooEnv(cfg=dict(env_id="pettingzoo.classic.nogame")).reset(seed=0)
    with pytest.raises(ConfigError, match="has no parallel API"):
        PettingZooEnv(cfg=dict(env_id=TICTACTOE, api="parallel")).reset(seed=0)
    with pytest.raises(StrideError, match="before reset"):
        PettingZooEnv(cfg=dict(env_id=TICTACTOE)).step({"player_1": 0})
    with pytest.raises(ConfigError, match=r"opening_plies=-1: valid choices: a whole number >= 0"):
        PettingZooEnv(cfg=dict(env_id=TICTACTOE, opening_plies=-1)).reset(seed=0)


def test_missing_extra_is_one_line(monkeypatch):
    import stride.envs.pettingzoo_env as pz_env

    def missing(module, extra, what=""):
        raise MissingExtraError(f'{what} need {module}: pip install "stride-rl[{extra}]"')

    monkeypatch.setattr(pz_env, "import_extra", missing)
    with pytest.raises(MissingExtraError, match=r'^PettingZoo envs need pettingzoo: pip install "stride-rl\[multiagent\]"$'):
        PettingZooEnv(cfg=dict(env_id=TICTACTOE)).reset(seed=0)


def test_same_seed_same_games_against_the_random_opponent():
    def games(seed):
        env = PettingZooEnv(cfg=dict(env_id=TICTACTOE, opponent="random"))
        env.seed(seed)
        out = []
        for _ in range(5):
            obs = env.reset()
            while True:
                ts = env.step({"player_1": int(np.flatnonzero(obs["player_1"]["action_mask"])[0])})
                out.append(ts.obs["player_1"]["observation"].tobytes() if ts.obs else b"end")
                if ts.done:
                    break
                obs = ts.obs
        return out

    assert games(7) == games(7) and games(7) != games(8)


# ---- through the managers ------------------------------------------------------------------------
def _manager(kind, factory, n=2, **cfg):
    fns = [functools.partial(PettingZooEnv, factory) for _ in range(n)]
    if kind != "base":
        cfg.setdefault("shared_memory", True)
    inner = MANAGERS[kind](fns, cfg)
    return inner, MultiAgentManager(inner)


def _check_streams(m, steps, rng):
    """Random legal actions for ``steps`` calls; every agent stream alternates action -> result and a
    new episode starts afresh (observation step 0 / an empty board)."""
    inflight, results, ends = set(), 0, 0
    for _ in range(steps):
        acts = {}
        for vid, o in m.ready_obs.items():
            assert vid not in inflight, f"env id {vid} ready again before its result came back"
            acts[vid] = _legal(o, rng) if isinstance(o, dict) else int(rng.integers(2))
        inflight |= set(acts)
        for vid, ts in m.step(acts).items():
            assert vid in inflight, f"a result for env id {vid}, which had no action in flight"
            inflight.discard(vid)
            results += 1
            ends += ts.done
    return results, ends


@pytest.mark.parametrize("kind", list(MANAGERS))
@pytest.mark.parametrize("factory", [make_relay, make_relay_aec, make_tictactoe], ids=["parallel", "aec", "tictactoe"])
def test_every_manager_gives_each_agent_its_own_stream(kind, factory):
    inner, m = _manager(kind, factory)
    try:
        m.seed(0)
        m.launch()
        assert m.env_num == 2 * len(m.agents)
        results, ends = _check_streams(m, 60, np.random.default_rng(0))
        assert results > 40 and ends > 4
    finally:
        m.close()


def test_base_and_subprocess_managers_give_the_same_transitions():
    out = []
    for kind in ("base", "subprocess"):
        _, m = _manager(kind, make_tictactoe)
        m.seed(4)
        m.launch()
        rng, got = np.random.default_rng(0), []
        for _ in range(80):
            for vid, ts in m.step({vid: _legal(o, rng) for vid, o in m.ready_obs.items()}).items():
                got.append((vid, ts.reward, ts.done, None if ts.obs is None else ts.obs["observation"].tobytes()))
        m.close()
        out.append(got)
    assert out[0] == out[1]


def test_agents_of_one_env_must_act_together():
    _, m = _manager("base", make_relay, n=1)
    m.launch()
    with pytest.raises(StrideError, match=r"env 0: agents \['a1', 'a2'\] got no action while \['a0'\] did"):
        m.step({0: 1})
    m.close()


def test_agents_with_different_spaces_cannot_share_a_model():
    fns = [functools.partial(PettingZooEnv, cfg=dict(env_id="pettingzoo.classic.tictactoe_v3", opponent="random"))]
    assert MultiAgentManager(BaseEnvManager(fns)).agents == ["player_1"]
    pytest.importorskip("mpe2")
    fns = [functools.partial(PettingZooEnv, cfg=dict(env_id="mpe2.simple_adversary_v3"))]
    with pytest.raises(ConfigError, match="parameter-shared agents need one observation space: agent 'adversary_0' has"):
        MultiAgentManager(BaseEnvManager(fns))


# ---- a worker killed mid-episode -------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["subprocess", "async_subprocess"])
@pytest.mark.parametrize("factory", [make_relay, make_relay_aec, make_tictactoe], ids=["parallel", "aec", "tictactoe"])
def test_sigkilled_worker_closes_the_episode_as_abnormal_for_every_agent(kind, factory):
    inner, m = _manager(kind, factory)
    rng = np.random.default_rng(0)
    try:
        m.seed(0)
        m.launch()
        n = len(m.agents)
        pids = set(inner.worker_pids)
        # step env 0 until every agent has acted this episode (env 1 is stepped alongside)
        acted = set()
        while acted != set(range(n)):
            acts = {vid: (_legal(o, rng) if isinstance(o, dict) else 0) for vid, o in m.ready_obs.items()}
            acted |= {vid for vid in acts if vid < n}
            done = [vid for vid, ts in m.step(acts).items() if vid < n and ts.done]
            if done:  # an episode of env 0 ended before all had acted: start counting again
                acted = set()
        # an async manager may still have env 0's last step in flight; its result, if it came after the
        # kill, would be a normal step and the test could not tell which action the worker died on
        while not any(vid < n for vid in m.ready_obs):
            m.step({})
        os.kill(inner.worker_pids[0], signal.SIGKILL)
        # every agent of env 0 has acted this episode and nothing is in flight: each one's next result
        # (of the action it is sent next, or the close of the episode it waits in) is the abnormal end
        in_flight, got, deadline = set(range(n)), {}, time.monotonic() + 60
        while not (in_flight <= set(got)) and time.monotonic() < deadline:
            acts = {vid: (_legal(o, rng) if isinstance(o, dict) else 0) for vid, o in m.ready_obs.items()
                    if vid < n and vid not in got}
            for vid, ts in m.step(acts).items():
                if vid < n:
                    got.setdefault(vid, ts)
        assert in_flight <= set(got)
        for vid in in_flight:  # the episode is lost for every agent in flight: closed, never stitched
            ts = got[vid]
            assert ts.done and ts.obs is None and ts.info["abnormal"], (vid, ts)
        # the next episode of env 0 starts afresh: step 0 of Relay, an empty board (or one stone) in tic-tac-toe
        while not any(vid < n for vid in m.ready_obs):
            m.step({})
        for vid, o in m.ready_obs.items():
            if vid < n:
                assert (o[0] == 0) if not isinstance(o, dict) else (o["observation"].sum() <= 1)
        pids |= set(inner.worker_pids)
        assert len(pids) == 3  # the killed worker was replaced
    finally:
        m.close()
    assert gone(pids) and worker_children() == set()


@pytest.mark.parametrize("kind", ["base", "subprocess"])
def test_an_illegal_action_is_refused_and_the_game_goes_on(kind):
    _, m = _manager(kind, make_tictactoe, n=1)
    try:
        m.launch()
        rng = np.random.default_rng(0)
        m.step({0: _legal(m.ready_obs[0], rng)})  # player_1 plays; player_2 (env id 1) to move
        taken = int(np.flatnonzero(m.ready_obs[1]["action_mask"] == 0)[0])
        with pytest.raises(InvalidActionError, match=rf"action {taken} of 'player_2' is not legal now"):
            m.step({1: taken})
        got = m.step({1: _legal(m.ready_obs[1], rng)})
        assert list(got) == [0] and not got[0].done  # player_1's transition ends at its next turn, as if nothing happened
    finally:
        m.close()
