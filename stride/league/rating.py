"""``Ratings``: every league player's TrueSkill rating (the ``trueskill`` library).

Each game of the league updates both players' ratings (``TrueSkill.rate``, draws included), the fixed
opponents' too, so the table shows where the learner stands against ``random`` and ``win_block``
as well as against its own past. A snapshot starts from its parent's mean with the default
uncertainty (DI-engine's ``snapshot``: "rating created with the parent's mu"). Defaults are
TrueSkill's own (mu 25, sigma 25/3, beta 25/6, draw probability 0.10) with the dynamics factor
``tau = sigma / 100``: DI-engine's ``tau = 0`` lets sigma shrink until a learner that keeps
improving can no longer move its mean. Needs ``pip install -c constraints.txt -e ".[league]"``.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Tuple

from ..utils.extras import import_extra
from ..utils.narrow import as_list, as_mapping, as_number


def _trueskill() -> Any:
    return import_extra("trueskill", "league", what="League ratings")


class Ratings:
    """TrueSkill ratings by player id."""

    def __init__(self, mu: float = 25.0, sigma: float = 25.0 / 3, beta: float = 25.0 / 6, tau: float = 25.0 / 300,
                 draw_probability: float = 0.10) -> None:
        self.params = dict(mu=float(mu), sigma=float(sigma), beta=float(beta), tau=float(tau),
                           draw_probability=float(draw_probability))
        self._env = _trueskill().TrueSkill(**self.params)
        self._ratings: Dict[str, Any] = {}

    def add(self, player: str, mu: float | None = None) -> None:
        """Rate ``player`` from ``mu`` (default: the prior mean) with the prior sigma."""
        self._ratings[player] = self._env.create_rating(mu=self.params["mu"] if mu is None else float(mu))

    def __contains__(self, player: object) -> bool:
        return player in self._ratings

    def get(self, player: str) -> Tuple[float, float]:
        """``(mu, sigma)`` of ``player``."""
        r = self._ratings[player]
        return float(r.mu), float(r.sigma)

    def update(self, home: str, away: str, outcome: str) -> None:
        """One game: ``outcome`` ('win' / 'draw' / 'loss') from ``home``'s side."""
        ranks = {"win": [0, 1], "draw": [0, 0], "loss": [1, 0]}[outcome]  # lower rank is better
        (a,), (b,) = self._env.rate([(self._ratings[home],), (self._ratings[away],)], ranks=ranks)
        self._ratings[home], self._ratings[away] = a, b

    def remove(self, player: str) -> None:
        self._ratings.pop(player, None)

    def state_dict(self) -> Dict[str, object]:
        return {"params": dict(self.params),
                "ratings": {p: [float(r.mu), float(r.sigma)] for p, r in self._ratings.items()}}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self.params = {k: as_number(v, f"rating param {k!r}") for k, v in as_mapping(state["params"], "'params'").items()}
        self._env = _trueskill().TrueSkill(**self.params)
        self._ratings = {}
        for p, ms in as_mapping(state["ratings"], "'ratings'").items():
            mu, sigma = as_list(ms, f"rating of {p!r}")
            self._ratings[str(p)] = self._env.create_rating(mu=as_number(mu, "mu"), sigma=as_number(sigma, "sigma"))
