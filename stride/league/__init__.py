"""Self-play leagues: players, payoff, matchmaking, snapshots and ratings (``stride -m league``).

One concept per module: :mod:`.player` (main / historical / fixed players), :mod:`.payoff`
(decayed win / draw / loss counts), :mod:`.matchmaking` (PFSP weights), :mod:`.rating`
(TrueSkill), :mod:`.league` (the league that ties them together and matches the collector's
episodes), :mod:`.exploiter` (the main exploiter as a learner), :mod:`.replica` (its copy in a Ray
collector process), :mod:`.games` (a policy as an opponent; evaluation games). The policy side is
:mod:`.snapshots` (snapshot / frozen copy / load back, over the policy's public API; the seeds'
``league_mode``).
"""

from .exploiter import MainExploiter
from .games import play_games, policy_opponent
from .league import League
from .matchmaking import pfsp_weights
from .payoff import Payoff
from .player import Player
from .replica import LeagueReplica
from .rating import Ratings
from .snapshots import LeagueMode, frozen, league_mode, load_snapshot, snapshot

__all__ = ["League", "LeagueReplica", "Player", "Payoff", "Ratings", "pfsp_weights", "play_games", "policy_opponent",
           "MainExploiter", "LeagueMode", "league_mode", "snapshot", "frozen", "load_snapshot"]
