"""``stride.zoo.pettingzoo.board_rules``'s game data (``BOARD_GAMES``): checked against PettingZoo's own
envs, and where a move lands on each board."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from stride.zoo.pettingzoo.board_rules import BOARD_GAMES, board_game, mirror_obs, mirror_transition, win_block_opponent


@pytest.mark.parametrize("name", sorted(BOARD_GAMES))
def test_the_data_matches_pettingzoos_env(name):
    game = BOARD_GAMES[name]
    env = importlib.import_module(f"pettingzoo.classic.{name}").env()
    env.reset(seed=0)
    agent = env.possible_agents[0]
    assert env.observation_space(agent)["observation"].shape == (game.rows, game.cols, 2)
    assert env.action_space(agent).n == (game.cols if game.gravity else game.rows * game.cols)
    env.close()


@pytest.mark.parametrize("name", sorted(BOARD_GAMES))
def test_k_in_a_row_ends_the_real_game_and_the_rule_finds_it(name):
    """Play the first player's stones along the first row / column until one move short of k in a
    row (the second player far away), then the rule must pick the winning move and PettingZoo must
    end the game with that move."""
    game = BOARD_GAMES[name]
    env = importlib.import_module(f"pettingzoo.classic.{name}").env()
    env.reset(seed=0)
    if game.gravity:  # connect four: first player stacks column 0, second stacks column 6
        mine, theirs = [0] * (game.k - 1), [game.cols - 1] * (game.k - 1)
    else:  # tic-tac-toe: first player fills row 0 but its last cell, second plays row 1
        mine, theirs = list(range(game.k - 1)), [game.cols + i for i in range(game.k - 1)]
    for a, b in zip(mine, theirs):
        env.step(a)
        env.step(b)
    obs, _, terminated, _, _ = env.last()
    assert not terminated
    move = win_block_opponent(obs, np.random.default_rng(0))
    env.step(move)
    winner = env.possible_agents[0]
    assert env.terminations[winner] and env.rewards[winner] == 1, (name, move)
    env.close()


def test_where_a_move_lands():
    c4 = BOARD_GAMES["connect_four_v3"]
    board = np.zeros((6, 7, 2), np.int8)
    assert c4.cell(board, 3) == (5, 3)
    board[5, 3, 0] = board[4, 3, 1] = 1
    assert c4.cell(board, 3) == (3, 3)
    board[:, 2, 0] = 1
    assert c4.cell(board, 2) is None  # a full column
    ttt = BOARD_GAMES["tictactoe_v3"]
    board = np.zeros((3, 3, 2), np.int8)
    assert ttt.cell(board, 5) == (1, 2)
    board[1, 2, 1] = 1
    assert ttt.cell(board, 5) is None  # a taken cell


def test_an_unknown_board_is_one_line():
    assert board_game(np.zeros((6, 7, 2))) is BOARD_GAMES["connect_four_v3"]
    with pytest.raises(ValueError, match=r"no board game has a \(8, 8\) board; valid choices: tictactoe_v3 \(3, 3\), "
                                         r"connect_four_v3 \(6, 7\)"):
        board_game(np.zeros((8, 8, 2)))


@pytest.mark.parametrize("name", sorted(BOARD_GAMES))
def test_mirrored_moves_give_pettingzoos_mirrored_boards(name):
    """Playing the mirrored moves in PettingZoo's own env gives the mirror of every observation."""
    game = BOARD_GAMES[name]
    module = importlib.import_module(f"pettingzoo.classic.{name}")
    played, mirrored = module.env(), module.env()
    played.reset(seed=0)
    mirrored.reset(seed=0)
    rng = np.random.default_rng(3)
    moves = 0
    while not (played.terminations[played.agent_selection] or played.truncations[played.agent_selection]):
        obs, obs_m = played.observe(played.agent_selection), mirrored.observe(mirrored.agent_selection)
        want = mirror_obs(obs)
        assert np.array_equal(want["observation"], obs_m["observation"])
        assert np.array_equal(want["action_mask"], obs_m["action_mask"])
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        played.step(action)
        mirrored.step(game.mirror_action(action))
        moves += 1
    assert moves >= 5 and played.rewards == mirrored.rewards


def test_mirror_transition_maps_obs_action_and_keeps_the_rest():
    board = np.zeros((6, 7, 2), np.int8)
    board[5, 1, 0] = 1
    mask = np.ones(7, np.int8)
    mask[0] = 0
    item = dict(obs=dict(observation=board, action_mask=mask), action=np.int64(1), reward=1.0,
                next_obs=dict(observation=board, action_mask=mask), done=True, value_gamma=0.9)
    out = mirror_transition(item)
    assert out["action"] == 5 and isinstance(out["action"], np.int64)
    assert out["obs"]["observation"][5, 5, 0] == 1 and out["obs"]["observation"].sum() == 1
    assert out["obs"]["action_mask"].tolist() == [1, 1, 1, 1, 1, 1, 0]
    assert (out["reward"], out["done"], out["value_gamma"]) == (1.0, True, 0.9)
    assert item["action"] == 1 and board[5, 1, 0] == 1                     # the original is untouched
    ttt = np.zeros((3, 3, 2), np.int8)
    assert BOARD_GAMES["tictactoe_v3"].mirror_action(0) == 2 and BOARD_GAMES["tictactoe_v3"].mirror_action(4) == 4
    assert mirror_transition(dict(obs=dict(observation=ttt, action_mask=np.ones(9, np.int8)), action=5,
                                  next_obs=dict(observation=ttt, action_mask=np.ones(9, np.int8))))["action"] == 3
    with pytest.raises(ValueError, match="needs board observations"):
        mirror_transition(dict(obs=np.zeros(4), action=0, next_obs=np.zeros(4)))


def test_env_mirror_makes_the_collector_return_each_sample_and_its_mirror_image(tmp_path, monkeypatch):
    """``env.mirror=True`` (connect four's league config): the env family's sample transform, which
    the entries take from the env class and hand to the collector."""
    import copy

    from stride.config import compile_config
    from stride.entry.utils import build_env_manager, build_policy, sample_transforms
    from stride.envs import PettingZooEnv
    from stride.worker import create_collector
    from stride.zoo.pettingzoo.board_rules import mirror_samples
    from stride.zoo.pettingzoo.config import connect_four_league_config as zoo

    monkeypatch.chdir(tmp_path)  # the compiled config is saved under exp_name
    main = copy.deepcopy(zoo.main_config)
    main["env"]["collector_env_num"] = 2
    cfg = compile_config(main, zoo.create_config, seed=0)  # no matchmaker: self-play, both seats
    assert sample_transforms(cfg) == [mirror_samples] and PettingZooEnv.sample_transforms({}) == []
    policy = build_policy(cfg, None)
    env = build_env_manager(cfg, 0)
    collector = create_collector(cfg.policy.collect.collector, env, policy.collect_mode,
                                 sample_transforms=sample_transforms(cfg))
    try:
        data = collector.collect(n_sample=6, policy_kwargs=dict(eps=1.0))
    finally:
        env.close()
    assert len(data) == 12                                  # 6 samples, then their 6 mirror images
    for real, image in zip(data[:6], data[6:]):
        assert int(image["action"]) == 6 - int(real["action"])
        assert np.array_equal(image["obs"]["observation"], real["obs"]["observation"][:, ::-1])
        assert np.array_equal(image["next_obs"]["action_mask"], mirror_transition(real)["next_obs"]["action_mask"])
