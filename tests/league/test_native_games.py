"""``stride.testing.board_games``: the independent lookahead, games on PettingZoo's own env, and the exact
tic-tac-toe outcomes and losing lines."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from stride.zoo.pettingzoo.board_rules import win_block_opponent
from stride.testing.board_games import exact_outcomes, forced_move, lookahead, losing_lines, play_native


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


# ---- connect four ------------------------------------------------------------------------------
def _c4(mine, theirs):
    """A connect-four observation from (row, col) stones of the mover (plane 0) and the other player."""
    board = np.zeros((6, 7, 2), np.int8)
    for cell in mine:
        board[cell][0] = 1
    for cell in theirs:
        board[cell][1] = 1
    mask = (board[0].sum(-1) == 0).astype(np.int8)  # a column is legal while its top cell is free
    return {"observation": board, "action_mask": mask}


def test_connect_four_lookahead_wins_then_blocks():
    rng = np.random.default_rng(0)
    # mine: three on the bottom row (column 3 wins); theirs: three up column 6 (column 6 blocks)
    assert lookahead(_c4([(5, 0), (5, 1), (5, 2)], [(5, 6), (4, 6), (3, 6)]), rng) == 3
    assert lookahead(_c4([(5, 0), (5, 1), (4, 4)], [(5, 6), (4, 6), (3, 6)]), rng) == 6
    # a diagonal: theirs on (5,0) (4,1) (3,2); (2,3) is where column 3's stone lands once it holds three
    mine = [(5, 1), (5, 2), (4, 2), (4, 3), (5, 6)]
    theirs = [(5, 0), (4, 1), (3, 2), (5, 3), (3, 3)]
    assert lookahead(_c4(mine, theirs), rng) == 3


def test_connect_four_lookahead_blocks_only_where_a_stone_lands():
    """Their row-4 threat at (4, 4) cannot be taken (column 4 is empty: a stone lands on row 5), so
    the lookahead blocks the threat it can reach (column 0, stacked three high) every time."""
    theirs = [(4, 1), (4, 2), (4, 3), (5, 0), (4, 0), (3, 0)]
    mine = [(5, 1), (5, 2), (5, 6), (4, 6), (5, 5)]
    for s in range(20):
        assert lookahead(_c4(mine, theirs), np.random.default_rng(s)) == 0
    # with (5, 3) mine too, column 4 completes my bottom row: a win comes before any block
    assert lookahead(_c4(mine + [(5, 3)], theirs), np.random.default_rng(0)) == 4


def test_connect_four_lookahead_plays_randomly_without_a_threat():
    moves = {lookahead(_c4([(5, 3)], [(4, 3)]), np.random.default_rng(s)) for s in range(40)}
    assert moves == set(range(7))


def test_connect_four_lookahead_agrees_with_win_block_on_forced_moves():
    """On positions of random play in PettingZoo's own env: where the mover can win, both win;
    else where the other player threatens, both block (each judged by a brute-force check)."""
    from pettingzoo.classic import connect_four_v3

    rng = np.random.default_rng(4)
    env = connect_four_v3.env()
    forced = 0
    for game in range(30):
        env.reset(seed=game)
        for _ in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                break
            a = lookahead(obs, np.random.default_rng(5))
            b = win_block_opponent(obs, np.random.default_rng(5))
            assert obs["action_mask"][a] and obs["action_mask"][b]
            legal = np.flatnonzero(obs["action_mask"])
            for plane in (0, 1):  # 0: a win of the mover's; 1: a four of the other player's to block
                finishing = {int(c) for c in legal if _completes(obs["observation"], c, plane)}
                if finishing:
                    assert a in finishing and b in finishing, (plane, finishing, a, b)
                    forced += 1
                    break
            env.step(int(rng.choice(legal)))
    env.close()
    assert forced >= 20  # random play reaches many forced positions: the check is not vacuous


def _completes(board, col, plane):
    """Whether a stone of ``plane`` dropped in ``col`` makes four in a row (a brute-force check)."""
    rows = [r for r in range(6) if board[r, col].sum() == 0]
    if not rows:
        return False
    stones = board[:, :, plane].copy()
    stones[max(rows), col] = 1
    for r in range(6):
        for c in range(7):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                if all(0 <= r + i * dr < 6 and 0 <= c + i * dc < 7 and stones[r + i * dr, c + i * dc] for i in range(4)):
                    return True
    return False


class _Random:
    def forward(self, data):
        rng = np.random.default_rng(sum(int(v["observation"].sum()) for v in data.values()))
        return {k: {"action": int(rng.choice(np.flatnonzero(v["action_mask"])))} for k, v in data.items()}


def test_play_native_connect_four_lookahead_beats_random_in_both_seats():
    for seat in (0, 1):
        w, d, l = play_native(_Random(), "connect_four_v3", "lookahead", seat, 30, seed=7)
        assert w + d + l == 30 and l >= 20, (seat, w, d, l)
    with pytest.raises(ValueError, match="unknown game 'chess_v6'; valid choices: tictactoe_v3, connect_four_v3"):
        play_native(_Random(), "chess_v6", "random", 0, 1)

class _Minimax:
    """Perfect tic-tac-toe play (negamax over the whole tree), first best move in action order."""

    def __init__(self):
        self.memo = {}

    def value(self, mine, theirs):            # +1 / 0 / -1 for the player to move
        key = (mine, theirs)
        if key not in self.memo:
            free = [a for a in range(9) if a not in mine and a not in theirs]
            if _wins(theirs):
                self.memo[key] = (-1, None)
            elif not free:
                self.memo[key] = (0, None)
            else:
                self.memo[key] = max(((-self.value(theirs, tuple(sorted(mine + (a,))))[0], -a) for a in free))
                self.memo[key] = (self.memo[key][0], -self.memo[key][1])
        return self.memo[key]

    def forward(self, data):
        out = {}
        for k, obs in data.items():
            board = obs["observation"].reshape(9, 2)
            mine = tuple(int(a) for a in np.flatnonzero(board[:, 0]))
            theirs = tuple(int(a) for a in np.flatnonzero(board[:, 1]))
            out[k] = {"action": self.value(mine, theirs)[1]}
        return out


def test_forced_move_is_the_lookaheads_choice_when_it_has_one():
    assert forced_move(_obs([0, 1], [4, 5])) == 2 and forced_move(_obs([0, 8], [4, 5])) == 3
    assert forced_move(_obs([0], [4])) is None


def test_exact_outcomes_and_losing_lines():
    perfect = _Minimax()
    for seat in (0, 1):
        assert losing_lines(perfect, seat) == []              # nobody beats perfect play
        for opp in ("random", "lookahead"):
            w, d, l = exact_outcomes(perfect, opp, seat)
            assert l == 0.0 and w > 0.1 and abs(w + d + l - 1.0) < 1e-12
    # the first-free-cell player as second: X 4, O 0, X 2 (threat 2-4-6), O 1 (no block), X 6 wins
    lines = losing_lines(_FirstLegal(), 1)
    assert (4, 0, 2, 1, 6) in lines
    for line in lines:                                         # each line: the adversary wins, the player
        x, o = list(line[0::2]), list(line[1::2])              # always took the first free cell
        assert _wins(x) and not _wins(o[:len(x)])
        for i in range(1, len(line), 2):
            assert line[i] == min(set(range(9)) - set(line[:i]))
    # the exact probabilities are what sampled games estimate
    for opp in ("random", "lookahead"):
        w, d, l = exact_outcomes(_FirstLegal(), opp, 1)
        sw, sd, sl = play_native(_FirstLegal(), "tictactoe_v3", opp, 1, 300, seed=11)
        for p, k in ((w, sw), (d, sd), (l, sl)):
            assert abs(k / 300 - p) < 4 * np.sqrt(p * (1 - p) / 300) + 1e-9, (opp, p, k)
    with pytest.raises(ValueError, match="unknown opponent 'minimax'"):
        exact_outcomes(perfect, "minimax", 0)
    with pytest.raises(ValueError, match="seat 2"):
        losing_lines(perfect, 2)
