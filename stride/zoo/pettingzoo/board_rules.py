"""The rules of PettingZoo's two-player board games: fixed opponents and the left-right mirror.

An opponent is ``act(obs, rng) -> action`` (:data:`stride.envs.opponents.Opponent`) on
PettingZoo's per-agent observation ``{'observation': planes, 'action_mask': legal}`` (plane 0: the
mover's stones, plane 1: the other player's). ``'random'`` plays a uniformly random legal move;
``'win_block'`` plays a move that wins now if there is one, else one that stops the other player
winning on their next move, else a random legal move -- the usual first benchmark above random for
tic-tac-toe and connect four. The rule works on the observation only (no access to the game's
internals); what it needs to know of a game is data, one :class:`BoardGame` row per game in
:data:`BOARD_GAMES`, found by the observation's board shape: tic-tac-toe's ``(3, 3, 2)`` planes
(action ``a`` is cell ``divmod(a, 3)``, three in a row) and connect four's ``(6, 7, 2)`` (action =
column, the stone drops to the lowest free row, four in a row). A third game of this kind is one
more row.

Both games are symmetric left-right: :func:`mirror_samples` (the sample transform
``'board_mirror'``, which ``PettingZooEnv`` offers the collector with ``env.mirror=True``) adds
each collected sample seen in the mirror. The generic code knows none of this: the opponents and
the transform are registered here by name (:data:`~stride.envs.opponents.OPPONENT_REGISTRY`,
:data:`~stride.envs.sample_transforms.SAMPLE_TRANSFORM_REGISTRY`), and the env and the league
look them up by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Tuple

import numpy as np
import numpy.typing as npt

from ...envs.opponents import OPPONENT_REGISTRY
from ...envs.sample_transforms import SAMPLE_TRANSFORM_REGISTRY

_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def _legal(obs: Mapping[str, npt.NDArray[np.generic]]) -> npt.NDArray[np.intp]:
    legal = np.flatnonzero(np.asarray(obs["action_mask"]))
    if legal.size == 0:
        raise ValueError("no legal action in the observation's action_mask")
    return legal


def random_opponent(obs: Mapping[str, npt.NDArray[np.generic]], rng: np.random.Generator) -> int:
    """A uniformly random legal action."""
    return int(rng.choice(_legal(obs)))


@dataclass(frozen=True)
class BoardGame:
    """What the rule opponents know of a k-in-a-row board game: its board and how a move lands."""

    #: PettingZoo's module (``pettingzoo.classic.<env>``)
    env: str
    rows: int
    cols: int
    #: stones in a row that win
    k: int
    #: True: an action names a column and the stone drops to its lowest free row (connect four);
    #: False: an action names the cell ``divmod(action, cols)`` (tic-tac-toe)
    gravity: bool

    def cell(self, board: npt.NDArray[np.generic], action: int) -> Optional[Tuple[int, int]]:
        """Where ``action`` puts a stone on ``board`` (rows x cols x planes), None where it cannot."""
        if not self.gravity:
            r, c = divmod(int(action), self.cols)
            return (r, c) if not np.asarray(board[r, c]).any() else None
        free = np.flatnonzero(np.asarray(board[:, action]).sum(-1) == 0)
        return (int(free[-1]), int(action)) if free.size else None

    def mirror_action(self, action: int) -> int:
        """``action`` on the board mirrored left-right (column ``c`` -> ``cols - 1 - c``)."""
        if self.gravity:
            return self.cols - 1 - int(action)
        r, c = divmod(int(action), self.cols)
        return r * self.cols + self.cols - 1 - c


#: the board games the rule opponents play, by PettingZoo module name
BOARD_GAMES: Dict[str, BoardGame] = {
    g.env: g for g in (BoardGame("tictactoe_v3", 3, 3, 3, gravity=False),
                       BoardGame("connect_four_v3", 6, 7, 4, gravity=True))
}


def board_game(board: npt.NDArray[np.generic]) -> BoardGame:
    """The game whose board ``board`` (rows x cols x 2 planes) is, or a one-line error naming the choices."""
    shape = tuple(np.shape(board)[:2])
    for game in BOARD_GAMES.values():
        if shape == (game.rows, game.cols):
            return game
    raise ValueError(f"no board game has a {shape} board; valid choices: "
                     + ", ".join(f"{g.env} {(g.rows, g.cols)}" for g in BOARD_GAMES.values()))


def mirror_obs(obs: Mapping[str, npt.NDArray[np.generic]]) -> Dict[str, npt.NDArray[np.generic]]:
    """One PettingZoo board observation mirrored left-right: the planes' columns reversed, the
    ``action_mask`` permuted by :meth:`BoardGame.mirror_action`; other keys kept."""
    board = np.asarray(obs["observation"])
    game = board_game(board)
    mask = np.asarray(obs["action_mask"])
    perm = [game.mirror_action(a) for a in range(mask.shape[-1])]
    return {**obs, "observation": board[:, ::-1].copy(), "action_mask": mask[perm]}


def mirror_transition(item: Mapping[str, object]) -> Dict[str, object]:
    """A board-game transition (``obs``, ``action``, ``next_obs`` as a collector gives them; other
    keys kept) seen in the mirror: connect four and tic-tac-toe are symmetric left-right, so the
    mirrored move is as legal and worth as much as the one played -- twice the data per game."""
    obs, next_obs = item["obs"], item["next_obs"]
    if not (isinstance(obs, Mapping) and isinstance(next_obs, Mapping)):
        raise ValueError(f"mirror_transition needs board observations {{'observation', 'action_mask'}}, got {type(obs).__name__}")
    action = np.asarray(item["action"])
    mirrored = board_game(np.asarray(obs["observation"])).mirror_action(int(action))
    return {**item, "obs": mirror_obs(obs), "next_obs": mirror_obs(next_obs),
            "action": np.array(mirrored, dtype=action.dtype).reshape(action.shape)[()]}


def mirror_samples(samples: List[Dict[str, object]]) -> List[Dict[str, object]]:
    """The sample transform ``'board_mirror'`` (``env.mirror=True``): ``samples`` and then each of
    them mirrored (:func:`mirror_transition`) -- 2 x the samples for the same env steps."""
    return samples + [mirror_transition(s) for s in samples]


def _wins(stones: npt.NDArray[np.generic], cell: Tuple[int, int], k: int) -> bool:
    """Whether a stone at ``cell`` completes ``k`` in a row of ``stones`` (a 0/1 plane)."""
    rows, cols = stones.shape
    r0, c0 = cell
    for dr, dc in _DIRECTIONS:
        count = 1
        for sign in (1, -1):
            r, c = r0 + sign * dr, c0 + sign * dc
            while 0 <= r < rows and 0 <= c < cols and stones[r, c]:
                count += 1
                r, c = r + sign * dr, c + sign * dc
        if count >= k:
            return True
    return False


def win_block_opponent(obs: Mapping[str, npt.NDArray[np.generic]], rng: np.random.Generator) -> int:
    """Win now if possible, else block the other player's immediate win, else a random legal move."""
    board = np.asarray(obs["observation"])
    legal = _legal(obs)
    game = board_game(board)
    for plane in (0, 1):  # 0: my winning move; 1: the other player's, which I take first
        for action in legal:
            cell = game.cell(board, int(action))
            if cell is not None and _wins(board[:, :, plane], cell, game.k):
                return int(action)
    return int(rng.choice(legal))


OPPONENT_REGISTRY.register("random", random_opponent)
OPPONENT_REGISTRY.register("win_block", win_block_opponent)
SAMPLE_TRANSFORM_REGISTRY.register("board_mirror", mirror_samples)
