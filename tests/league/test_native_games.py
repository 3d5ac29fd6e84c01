"""``stride.testing.board_games``: the independent lookahead and games on PettingZoo's own env."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from stride.envs.board_opponents import win_block_opponent
from stride.testing.board_games import lookahead, play_native


def _obs(mine, theirs, rows=3, cols=3):
    board = np.zeros((rows, cols, 2), np.int8)
    for a in mine:
        board[divmod(a, 3)][0] = 1
    for a in theirs:
        board[divmod(a, 3)][1] = 1
    mask = (board.sum(-1).reshape(-1) == 0).astype(np.int8)
    return {"observation": board, "action_mask": mask}


LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def _wins(cells):
    return any(all(c in set(map(int, cells)) for c in line) for line in LINES)


def test_lookahead_wins_then_blocks():
    rng = np.random.default_rng(0)
    assert lookahead(_obs([0, 1], [4, 5]), rng) == 2          # win (0-1-2) before blocking (3)
    assert lookahead(_obs([0, 8], [4, 5]), rng) == 3          # block 3-4-5
    assert lookahead(_obs([2], [0, 4]), rng) == 8             # block the diagonal 0-4-8


def test_lookahead_agrees_with_win_block_on_forced_moves():
    rng = np.random.default_rng(1)
    for _ in range(300):
        cells = rng.permutation(9)[: rng.integers(2, 7)]
        mine, theirs = list(cells[::2]), list(cells[1::2])
        obs = _obs(mine, theirs)
        if _wins(mine) or _wins(theirs):
            continue
        a, b = lookahead(obs, np.random.default_rng(2)), win_block_opponent(obs, np.random.default_rng(2))
        assert obs["action_mask"][a] and obs["action_mask"][b]
        # where a move is forced (a win, else a block), both find one of the same kind
        for stones in (mine, theirs):
            if any(_wins(stones + [c]) for c in np.flatnonzero(obs["action_mask"])):
                assert _wins(stones + [a]) and _wins(stones + [b])
                break


class _FirstLegal:
    def forward(self, data):
        return {k: {"action": int(np.flatnonzero(v["action_mask"])[0])} for k, v in data.items()}


def test_play_native_counts_games_in_both_seats():
    for seat in (0, 1):
        w, d, l = play_native(_FirstLegal(), "tictactoe_v3", "lookahead", seat, 20, seed=5)
        assert w + d + l == 20 and l > 0   # a player that always takes the first free cell loses to the lookahead
    with pytest.raises(ValueError, match="unknown opponent 'minimax'"):
        play_native(_FirstLegal(), "tictactoe_v3", "minimax", 0, 1)
