"""Fresh games on PettingZoo's own board-game envs, away from Stride's wrapper: how the league's
learning test and benchmark judge a trained player.

:func:`play_native` plays a policy's eval mode in one seat of PettingZoo's AEC env (``env()`` of
``pettingzoo.classic.tictactoe_v3`` or ``connect_four_v3``, stepped through ``agent_iter`` /
``last`` / ``step``) against ``'random'`` (a uniformly random legal move) or ``'lookahead'`` (win
now if possible, else block the other player's immediate win, else random). The lookahead is
written here again, on the board PettingZoo's observation shows, independently of
``stride.envs.board_opponents.win_block_opponent`` (which the league trains against), so a test
does not grade the trainer with its own ruler; for the same reason the games' rules it needs
(:data:`NATIVE_GAMES`: board size, stones in a row, whether stones drop) are restated here rather
than imported from ``stride.envs.board_opponents.BOARD_GAMES``. It scans every k-in-a-row line of
the board rather than counting outward from a cell as ``win_block_opponent`` does.
"""

from __future__ import annotations

import importlib
from typing import Callable, Dict, Mapping, Tuple

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
    return int(rng.choice(legal))


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
