"""``LeagueReplica``: the league as a collector in another process sees it (``stride -m league --workers N``).

With collectors as Ray actors the league stays in the driver (one payoff, one set of snapshots,
one rating table) and each collector process holds a replica: a :class:`~stride.league.League`
that follows the driver's ``state_dict`` (sent with each collect when it changed), draws its envs'
matches from it exactly as the serial league draws them (:meth:`League.match`, a pure function of
the episode seed and the league's state), and keeps each finished game instead of recording it;
the collect returns the games (:meth:`take_games`) and the driver records them
(:meth:`League.add_game`). So matchmaking, snapshots, payoff and ratings are one implementation
for both pipelines; what the parallel one adds is staleness: a collector draws from the payoff as
it was at its last sync (at most one collect behind), as its weights are.

Unlike DI-engine's distributed league, whose actors fetch opponents' checkpoints as files from a
league server over HTTP, the frozen weights travel in the one state object Ray broadcasts, and a
collector that dies loses only the games it had not returned yet.
"""

from __future__ import annotations

from typing import Callable, List, Mapping, Optional, Sequence, Tuple

from ..envs.opponents import Opponent
from .league import League

#: a finished game as :meth:`League.finish` gives it: ``(opponent, outcome)``, None for self-play
Game = Optional[Tuple[str, str]]


class LeagueReplica:
    """A :class:`~stride.envs.opponents.Matchmaker` over a copy of the driver's league.

    Args:
        cfg: the ``league`` config section (as the driver's league).
        make_actor: frozen weights -> ``act(obs, rng)`` (as :class:`League`'s).
    """

    def __init__(self, cfg: Mapping[str, object],
                 make_actor: Optional[Callable[[Mapping[str, object]], Opponent]] = None) -> None:
        self.league = League(cfg, make_actor=make_actor)
        self.version = -1  # the driver's league version followed (-1: none yet, the initial league)
        self._games: List[Game] = []

    def sync(self, version: int, state: Mapping[str, object]) -> None:
        """Follow the driver's league ``state`` (its ``state_dict``) unless ``version`` is followed already."""
        if version != self.version:
            self.league.follow(state)
            self.version = int(version)

    def match(self, seed: int, agents: Sequence[str]) -> Optional[Tuple[str, Opponent]]:
        return self.league.match(seed, agents)

    def result(self, seed: int, returns: Mapping[str, float]) -> None:
        self._games.append(self.league.finish(seed, returns))

    def take_games(self) -> List[Game]:
        """The games finished since the last call (for the driver's :meth:`League.add_game`)."""
        games, self._games = self._games, []
        return games
