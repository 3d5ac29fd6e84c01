"""Opponents played inside a two-player env, and who picks them: the generic side of self-play.

An opponent is ``act(obs, rng) -> action`` on one agent's observation (PettingZoo's board games:
``{'observation': planes, 'action_mask': legal}``). Fixed opponents are registered by name in
:data:`OPPONENT_REGISTRY` by the env family whose games they know (the board games' rules,
``'random'`` and ``'win_block'``, live with the PettingZoo zoo family:
``stride.zoo.pettingzoo.board_rules``); a frozen league player is an opponent too
(``stride.league``). Who plays the learner can also change per episode: a :class:`Matchmaker`
(the league) is asked at each reset for the episode's opponent and seat and told the episode's
result; :class:`~stride.envs.PettingZooEnv` steps the opponent through the same ``act(obs, rng)``
call either way.
"""

from __future__ import annotations

from typing import Callable, List, Mapping, Optional, Protocol, Sequence, Tuple, cast

import numpy as np
import numpy.typing as npt

from ..utils.registry import Registry

#: ``act(obs, rng) -> action``
Opponent = Callable[[Mapping[str, npt.NDArray[np.generic]], np.random.Generator], int]

#: fixed opponents by name; the built-ins (the board games' rules) are registered by
#: ``stride.zoo.pettingzoo``, imported by name on the first lookup (this layer cannot import it)
OPPONENT_REGISTRY: Registry[Callable[..., object]] = Registry("opponent", "stride.zoo.pettingzoo", plugins="stride.zoo")


class Matchmaker(Protocol):
    """Who plays the learner, episode by episode (``PettingZooEnv(matchmaker=...)``; the league is one)."""

    def match(self, seed: int, agents: Sequence[str]) -> Optional[Tuple[str, Opponent]]:
        """The opponent of the episode started with ``seed``: ``(the agent it plays, its act)``, or
        None (self-play: the learner plays every agent). Asked again with the same seed (an episode
        replayed on resume), it gives the same answer."""

    def result(self, seed: int, returns: Mapping[str, float]) -> None:
        """The episode started with ``seed`` ended; ``returns``: the learner's agents' returns."""


def get_opponent(name: str) -> Opponent:
    """The fixed opponent registered as ``name``, or a one-line error naming the choices."""
    return cast(Opponent, OPPONENT_REGISTRY.get(name))


def opponent_names() -> List[str]:
    """The registered fixed opponents' names (the built-ins included)."""
    return OPPONENT_REGISTRY.names()
