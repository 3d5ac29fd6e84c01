"""``Payoff``: decayed win / draw / loss counts between every pair of league players.

As DI-engine's ``BattleSharedPayoff`` (``ding/league/shared_payoff.py``): a record per pair, all of
its counts multiplied by ``decay`` each time that pair plays before the new result is added, so
old games fade and a player that improved is not judged by its early losses; a pair with fewer
than ``min_games`` (decayed) games has win rate 0.5 (unknown, neither easy nor hard). The win rate
counts a draw as half a win. Better than DI-engine's on purpose: one record per unordered pair (the
reverse view is the same record with wins and losses swapped, never two copies that can disagree),
no lock (the serial league has one writer), and a ``state_dict`` of plain values for exact resume.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Tuple

from ..utils.errors import ConfigError
from ..utils.narrow import as_list, as_number

OUTCOMES = ("win", "draw", "loss")
_SWAP = {"win": "loss", "draw": "draw", "loss": "win"}


class Payoff:
    """Win / draw / loss counts of ``home`` against ``away``, decayed per game of the pair."""

    def __init__(self, decay: float = 0.99, min_games: float = 8) -> None:
        if not 0.0 < decay <= 1.0:
            raise ConfigError(f"payoff decay must be in (0, 1], got {decay!r}")
        self.decay = float(decay)
        self.min_games = float(min_games)
        self._records: Dict[Tuple[str, str], List[float]] = {}  # (a, b) with a < b -> [a's wins, draws, a's losses]

    @staticmethod
    def _key(home: str, away: str) -> Tuple[Tuple[str, str], bool]:
        if home == away:
            raise ValueError(f"a payoff record needs two players, got {home!r} twice")
        return ((home, away), False) if home < away else ((away, home), True)

    def update(self, home: str, away: str, outcome: str) -> None:
        """One game of ``home`` against ``away``: decay the pair's counts, then add ``outcome``
        ('win' / 'draw' / 'loss', from ``home``'s side)."""
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {outcome!r}; valid choices: {', '.join(OUTCOMES)}")
        key, reverse = self._key(home, away)
        record = self._records.setdefault(key, [0.0, 0.0, 0.0])
        for i in range(3):
            record[i] *= self.decay
        record[OUTCOMES.index(_SWAP[outcome] if reverse else outcome)] += 1.0

    def record(self, home: str, away: str) -> Tuple[float, float, float]:
        """``(wins, draws, losses)`` of ``home`` against ``away`` (decayed; zeros before any game)."""
        key, reverse = self._key(home, away)
        w, d, l = self._records.get(key, (0.0, 0.0, 0.0))
        return (l, d, w) if reverse else (w, d, l)

    def games(self, home: str, away: str) -> float:
        """The (decayed) number of games of the pair."""
        return sum(self.record(home, away))

    def win_rate(self, home: str, away: str) -> float:
        """``(wins + draws / 2) / games`` of ``home`` against ``away``; 0.5 below ``min_games`` games."""
        w, d, l = self.record(home, away)
        games = w + d + l
        if games < self.min_games or games <= 0.0:
            return 0.5
        return (w + 0.5 * d) / games

    def remove(self, player: str) -> None:
        """Forget every record of ``player`` (a player dropped from the league)."""
        self._records = {k: v for k, v in self._records.items() if player not in k}

    def state_dict(self) -> Dict[str, object]:
        return {"decay": self.decay, "min_games": self.min_games,
                "records": [[a, b, *counts] for (a, b), counts in sorted(self._records.items())]}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        records = state["records"]
        if not isinstance(records, (list, tuple)):
            raise ValueError(f"not a Payoff state_dict (keys {sorted(state)})")
        self.decay = as_number(state["decay"], "payoff 'decay'")
        self.min_games = as_number(state["min_games"], "payoff 'min_games'")
        self._records = {}
        for r in records:
            a, b, *counts = as_list(r, "a payoff record")
            self._records[(str(a), str(b))] = [as_number(x, "a payoff count") for x in counts]
