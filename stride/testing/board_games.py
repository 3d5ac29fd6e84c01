"""Fresh games on PettingZoo's own board-game envs, away from Stride's wrapper: how the league's
learning test and benchmark judge a trained player.

:func:`play_native` plays a policy's eval mode in one seat of PettingZoo's AEC env (``env()`` of
``pettingzoo.classic.tictactoe_v3`` or ``connect_four_v3``, stepped through ``agent_iter`` /
``last`` / ``step``) against ``'random'`` (a uniformly random legal move) or ``'lookahead'`` (win
now if possible, else block the other player's immediate win, else random). The lookahead is
written here again, on the board PettingZoo's observation shows, independently of
``stride.zoo.pettingzoo.board_rules.win_block_opponent`` (which the league trains against), so a test
does not grade the trainer with its own ruler; for the same reason the games' rules it needs
(:data:`NATIVE_GAMES`: board size, stones in a row, whether stones drop) are restated here rather
than imported from ``stride.zoo.pettingzoo.board_rules.BOARD_GAMES``. It scans every k-in-a-row line of
the board rather than counting outward from a cell as ``win_block_opponent`` does.

On tic-tac-toe the game tree is small enough to play every game at once: :func:`exact_outcomes`
gives the exact probabilities of win / draw / loss of a (deterministic) policy against
``'random'`` or ``'lookahead'`` in a seat -- what 100 sampled games estimate to within a few
points, and so what tells "never loses" from "lost none of these 100" -- and
:func:`losing_lines` every line a perfect adversary can win against it (its exploitability).
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np
import numpy.typing as npt

from ..policy.base_policy import EvalMode
from ..utils.extras import import_extra

NATIVE_OPPONENTS = ("random", "lookahead")
Board = npt.NDArray[np.int8]
#: the games :func:`play_native` plays: PettingZoo module -> (rows, cols, stones in a row that win,
#: whether an action is a column whose lowest free cell the stone drops to; else the cell
#: ``divmod(action, cols)``)
NATIVE_GAMES: Dict[str, Tuple[int, int, int, bool]] = {
    "tictactoe_v3": (3, 3, 3, False),
    "connect_four_v3": (6, 7, 4, True),
}


def _lines(rows: int, cols: int, k: int) -> list[list[Tuple[int, int]]]:
    """Every k-in-a-row of a rows x cols board, as cell lists."""
    out = []
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + i * dr, c + i * dc) for i in range(k)]
                if all(0 <= rr < rows and 0 <= cc < cols for rr, cc in cells):
                    out.append(cells)
    return out


def _game(board: Board) -> Tuple[int, int, int, bool]:
    """The :data:`NATIVE_GAMES` rules of the game whose board this is."""
    for rules in NATIVE_GAMES.values():
        if board.shape[:2] == rules[:2]:
            return rules
    raise ValueError(f"no game of {', '.join(NATIVE_GAMES)} has a board of shape {board.shape}")


def _landing(board: Board, action: int, gravity: bool) -> Tuple[int, int]:
    """The cell a move fills: with gravity the lowest empty row of column ``action``, else
    ``divmod(action, cols)``."""
    rows, cols = int(board.shape[0]), int(board.shape[1])
    if not gravity:
        return divmod(action, cols)
    empty = [r for r in range(rows) if board[r, action].sum() == 0]
    return max(empty), action


def lookahead(obs: Mapping[str, npt.NDArray[np.generic]], rng: np.random.Generator) -> int:
    """Win if a move wins now, else take the cell where the other player would win, else random."""
    forced = forced_move(obs)
    if forced is not None:
        return forced
    return int(rng.choice(np.flatnonzero(obs["action_mask"])))


def forced_move(obs: Mapping[str, npt.NDArray[np.generic]]) -> Optional[int]:
    """The lookahead's move when it has no choice: the first winning move, else the first move
    that blocks the other player's immediate win; None when neither exists (it plays at random)."""
    board = np.asarray(obs["observation"]).astype(np.int8)
    legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
    rows, cols, k, gravity = _game(board)
    lines = _lines(rows, cols, k)
    for plane in (0, 1):
        for a in legal:
            cell = _landing(board, a, gravity)
            stones = board[:, :, plane].copy()
            stones[cell] = 1
            if any(cell in line and all(stones[x] for x in line) for line in lines):
                return a
    return None


def _random(obs: Mapping[str, npt.NDArray[np.generic]], rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(obs["action_mask"])))


def play_native(eval_mode: EvalMode, game: str, opponent: str, seat: int, n: int, seed: int = 0
                ) -> Tuple[int, int, int]:
    """``(won, drawn, lost)`` of ``eval_mode`` in ``n`` games of ``pettingzoo.classic.<game>``
    (``'tictactoe_v3'``, ``'connect_four_v3'``) against ``opponent`` (``'random'`` / ``'lookahead'``),
    playing the ``seat``-th agent (0: first to move, 1: second); game ``i`` is seeded ``seed + i``."""
    if opponent not in NATIVE_OPPONENTS:
        raise ValueError(f"unknown opponent {opponent!r}; valid choices: {', '.join(NATIVE_OPPONENTS)}")
    if game not in NATIVE_GAMES:
        raise ValueError(f"unknown game {game!r}; valid choices: {', '.join(NATIVE_GAMES)}")
    import_extra("pettingzoo", "multiagent", what="PettingZoo games")
    env = importlib.import_module(f"pettingzoo.classic.{game}").env()
    other: Callable[[Mapping[str, npt.NDArray[np.generic]], np.random.Generator], int] = \
        lookahead if opponent == "lookahead" else _random
    rng = np.random.default_rng(seed)
    won = drawn = lost = 0
    for i in range(n):
        env.reset(seed=seed + i)
        me = env.possible_agents[seat]
        final = 0.0
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                if agent == me:
                    final = float(reward)
                env.step(None)
                continue
            if agent == me:
                action = int(eval_mode.forward({0: obs})[0]["action"])
                if not obs["action_mask"][action]:
                    raise AssertionError(f"the player chose illegal action {action} (mask {obs['action_mask']})")
            else:
                action = other(obs, rng)
            env.step(action)
        won, drawn, lost = won + (final > 0), drawn + (final == 0), lost + (final < 0)
    env.close()
    return won, drawn, lost


# ---- exact games on tic-tac-toe -----------------------------------------------------------------
_TTT_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
Cells = Tuple[int, ...]  # 9 cells, action order (divmod(action, 3) is the observation's row, col): 0 empty, 1 / 2 a seat


def _winner(cells: Cells) -> int:
    for a, b, c in _TTT_LINES:
        if cells[a] and cells[a] == cells[b] == cells[c]:
            return cells[a]
    return 0


def _ttt_obs(cells: Cells, mover: int) -> Dict[str, npt.NDArray[np.int8]]:
    """PettingZoo's tic-tac-toe observation of ``mover`` (1 / 2): its stones in plane 0."""
    board = np.zeros((3, 3, 2), np.int8)
    for a, v in enumerate(cells):
        if v:
            board[divmod(a, 3)][0 if v == mover else 1] = 1
    return {"observation": board, "action_mask": np.array([v == 0 for v in cells], np.int8)}


class _Tree:
    """A deterministic player's moves on tic-tac-toe, asked once per position."""

    def __init__(self, eval_mode: EvalMode, seat: int) -> None:
        self.eval_mode, self.me = eval_mode, seat + 1
        self._moves: Dict[Cells, int] = {}

    def move(self, cells: Cells) -> int:
        if cells not in self._moves:
            obs = _ttt_obs(cells, self.me)
            action = int(self.eval_mode.forward({0: obs})[0]["action"])
            if cells[action]:
                raise AssertionError(f"the player chose illegal action {action} on {cells}")
            self._moves[cells] = action
        return self._moves[cells]


def exact_outcomes(eval_mode: EvalMode, opponent: str, seat: int) -> Tuple[float, float, float]:
    """The exact probabilities ``(won, drawn, lost)`` of the deterministic ``eval_mode`` (its greedy
    action) on tic-tac-toe against ``opponent`` (``'random'`` / ``'lookahead'``: every one of its
    random choices weighed by its probability), playing ``seat`` (0: first, 1: second)."""
    if opponent not in NATIVE_OPPONENTS:
        raise ValueError(f"unknown opponent {opponent!r}; valid choices: {', '.join(NATIVE_OPPONENTS)}")
    if seat not in (0, 1):
        raise ValueError(f"seat {seat!r} must be 0 (first) or 1 (second)")
    tree = _Tree(eval_mode, seat)
    me = seat + 1

    @lru_cache(maxsize=None)
    def value(cells: Cells, mover: int) -> Tuple[float, float, float]:
        won = _winner(cells)
        if won:
            return (1.0, 0.0, 0.0) if won == me else (0.0, 0.0, 1.0)
        if all(cells):
            return 0.0, 1.0, 0.0
        if mover == me:
            moves = [(tree.move(cells), 1.0)]
        else:
            forced = forced_move(_ttt_obs(cells, mover)) if opponent == "lookahead" else None
            legal = [a for a in range(9) if not cells[a]]
            moves = [(forced, 1.0)] if forced is not None else [(a, 1.0 / len(legal)) for a in legal]
        out = [0.0, 0.0, 0.0]
        for a, p in moves:
            child = value(cells[:a] + (mover,) + cells[a + 1:], 3 - mover)
            for i in range(3):
                out[i] += p * child[i]
        return out[0], out[1], out[2]

    return value((0,) * 9, 1)


def losing_lines(eval_mode: EvalMode, seat: int) -> List[Tuple[int, ...]]:
    """Every game (its moves, in action numbers) that the deterministic ``eval_mode`` playing
    ``seat`` on tic-tac-toe loses, over all the other player's moves: empty when no opponent can
    beat it -- and since a uniformly random player plays each of these games with a positive
    probability, empty exactly when it never loses to random either."""
    if seat not in (0, 1):
        raise ValueError(f"seat {seat!r} must be 0 (first) or 1 (second)")
    tree = _Tree(eval_mode, seat)
    me = seat + 1
    lines: List[Tuple[int, ...]] = []

    def walk(cells: Cells, mover: int, moves: Tuple[int, ...]) -> None:
        won = _winner(cells)
        if won or all(cells):
            if won and won != me:
                lines.append(moves)
            return
        choices = [tree.move(cells)] if mover == me else [a for a in range(9) if not cells[a]]
        for a in choices:
            walk(cells[:a] + (mover,) + cells[a + 1:], 3 - mover, moves + (a,))

    walk((0,) * 9, 1, ())
    return lines
