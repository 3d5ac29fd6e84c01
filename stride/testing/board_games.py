"""Fresh games on PettingZoo's own board-game envs, away from Stride's wrapper: how the league's
learning test and benchmark judge a trained player.

:func:`play_native` plays a policy's eval mode in one seat of PettingZoo's AEC env (``env()`` of
``pettingzoo.classic.tictactoe_v3`` or ``connect_four_v3``, stepped through ``agent_iter`` /
``last`` / ``step``) against ``'random'`` (a uniformly random legal move) or ``'lookahead'`` (win
now if possible, else block the other player's immediate win, else random). The lookahead is
written here again, on the board PettingZoo's observation shows, independently of
``stride.envs.board_opponents.win_block_opponent`` (which the league trains against), so a test
does not grade the trainer with its own ruler.
"""

from __future__ import annotations

import importlib
from typing import Callable, Mapping, Tuple

import numpy as np
import numpy.typing as npt

from ..policy.base_policy import EvalMode
from ..utils.extras import import_extra

NATIVE_OPPONENTS = ("random", "lookahead")
Board = npt.NDArray[np.int8]


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


def _landing(board: Board, action: int) -> Tuple[int, int]:
    """The cell a move fills: tic-tac-toe's ``divmod(action, 3)``; connect four's lowest empty row."""
    rows, cols = board.shape[:2]
    if (rows, cols) == (3, 3):
        return divmod(action, 3)
    empty = [r for r in range(rows) if board[r, action].sum() == 0]
    return max(empty), action


def lookahead(obs: Mapping[str, npt.NDArray[np.generic]], rng: np.random.Generator) -> int:
    """Win if a move wins now, else take the cell where the other player would win, else random."""
    board = np.asarray(obs["observation"]).astype(np.int8)
    legal = [int(a) for a in np.flatnonzero(obs["action_mask"])]
    rows, cols = board.shape[:2]
    k = 3 if (rows, cols) == (3, 3) else 4
    lines = _lines(rows, cols, k)
    for plane in (0, 1):
        for a in legal:
            cell = _landing(board, a)
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
