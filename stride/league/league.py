"""``League``: the players of one self-play run, their payoff, ratings, matchmaking and snapshots.

One main player learns; at each episode of its collector the league draws its opponent
(:meth:`League.match`, the env's :class:`~stride.envs.opponents.Matchmaker`):

- ``'pfsp'``: a frozen player (a historical snapshot or a fixed opponent) drawn by prioritised
  fictitious self-play on the main player's win rates (:mod:`stride.league.matchmaking`);
- ``'uniform'``: a frozen player drawn uniformly (so an opponent already beaten is still met now
  and then, and what it taught is not forgotten);
- ``'fixed'``: one of the fixed opponents, uniformly (scripted play the snapshots do not show:
  ``win_block`` punishes every missed block, ``random`` reaches positions self-play never does;
  on tic-tac-toe seed 0, PFSP among them -- nearly always ``win_block`` -- lost more games to the
  lookahead as second player than the uniform draw: 8-10 % against 0.2-6 % at 25-55k env steps);
- ``'sp'``: plain self-play -- no opponent, the learner plays every seat and learns from both;

and the seat it plays, uniformly (or as ``main_seat_probs`` says), so the main player learns both
to open and to answer. Results
come back at the episode's end (:meth:`League.result`) into the payoff (decayed win / draw / loss
counts) and the TrueSkill ratings. The snapshot rule is DI-engine's ``is_trained_enough``
(``ding/league/player.py``) in train iterations: no snapshot before ``snapshot_every`` iterations
since the last one, always one after twice that, and in between one as soon as the main player's
lowest win rate against the historical players exceeds ``strong_win_rate``.

The main exploiter (``main_exploiter.use``; AlphaStar's ``MainExploiter``, Vinyals et al. 2019,
and DI-engine's ``ding/league/player.py``): a second learner, built by the pipeline, whose episodes
(:meth:`League.exploiter_matches`) all meet the main player's newest snapshot, in a random seat,
so it learns nothing but the lines that beat the main player as it now plays. Its own snapshot
rule is the main player's with its win rate against that snapshot in place of the lowest one
against the historicals; each of its snapshots joins the pool as a historical player (so PFSP,
which draws the hardest opponents first, sends the main player to whatever beats it), and after
each snapshot the pipeline resets it to its initial weights (AlphaStar: "reset to the supervised
agent"), so the next one looks for a new weakness instead of polishing the old one. Why it is
needed: the main player's Q-values are expected returns against the mix of opponents it meets,
and a move that a random opponent punishes one time in six can look better than the safe one;
only opponents that always punish a mistake make "never loses" the optimum. (On tic-tac-toe,
seeds 0-4, it has not measurably helped yet: ``benchmarks/league/README.md``.)

Draws are a pure function of the episode seed and the league's state (no RNG of its own), and the
league remembers each running episode's opponent, so an episode replayed on resume meets the same
opponent in the same seat and the ``state_dict`` (players with their weights, payoff, ratings,
running episodes, counters) makes a resumed run the uninterrupted one.

Better than DI-engine's on purpose: its league (#90, #645: "unresolved for 18 months") shares
checkpoints as files between processes and had no working self-play example; this one is in the
run's checkpoint and is exercised end to end by ``stride -m league`` on tic-tac-toe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..config.config import Configurable
from ..config.setting import Setting
from ..config.view import ConfigView, declared, setting, subsection
from ..envs.opponents import Opponent, get_opponent
from ..utils.errors import ConfigError
from ..utils.narrow import as_int, as_list, as_mapping
from ..utils.registry import LEAGUE_REGISTRY
from .matchmaking import WEIGHTINGS, draw_index, pfsp_weights
from .payoff import Payoff
from .player import Player
from .rating import Ratings

BRANCHES = ("pfsp", "uniform", "fixed", "sp")
MAIN = "main"
EXPLOITER = "main_exploiter"


class SeatRates(Setting):
    """A rate in [0, 1] for every seat, or a list of them, one per seat (first mover first), or None."""

    def __init__(self, default: object) -> None:
        super().__init__(default, "[0, 1]", kind=float, optional=True)

    def describe(self) -> str:
        return "a number in [0, 1] or a list of them, one per seat (first mover first) (or None)"

    def check(self, dotted: str, value: object) -> None:
        if isinstance(value, (list, tuple)):
            if not value:
                raise ConfigError(f"config key '{dotted}' must be {self.describe()}, got {value!r}")
            for v in value:
                super().check(dotted, v)
            return
        super().check(dotted, value)


@dataclass(frozen=True)
class ExploiterRuleConfig(ConfigView):
    """``league.main_exploiter``: whether a main exploiter trains, and when it is snapshotted."""

    #: (bool) train a main exploiter beside the main player (see the module docstring).
    use: bool = False
    #: (int) the exploiter's train iterations between its snapshots: at least this many, at most twice.
    snapshot_every: int = setting(1000, "[1, inf)")
    #: (float) between those, snapshot (and reset) once its win rate against the main player exceeds this.
    strong_win_rate: float = setting(0.7, "[0, 1]")


@dataclass(frozen=True)
class PayoffConfig(ConfigView):
    """``league.payoff``: the decayed game records (:class:`~stride.league.payoff.Payoff`)."""

    #: (float) each game of a pair first multiplies its counts by this.
    decay: float = setting(0.99, "(0, 1]")
    #: (float) fewer (decayed) games than this: win rate 0.5.
    min_games: float = setting(8.0, "[0, inf)")


@dataclass(frozen=True)
class RatingConfig(ConfigView):
    """``league.rating``: TrueSkill's parameters (``trueskill.TrueSkill``)."""

    #: (float) a new player's mean skill.
    mu: float = 25.0
    #: (float) a new player's skill uncertainty (standard deviation).
    sigma: float = 25.0 / 3
    #: (float) the performance noise of one game.
    beta: float = 25.0 / 6
    #: (float) the uncertainty added before each game (skills drift).
    tau: float = 25.0 / 300
    #: (float) the probability of a draw between equal players.
    draw_probability: float = setting(0.10, "[0, 1)")


@dataclass(frozen=True)
class LeagueConfig(ConfigView):
    """``league``: what a :class:`League` reads (its matchmaking, snapshots and ratings) and the
    stop rule of the league entries' evaluations."""

    #: (str) the registered league name.
    type: Optional[str] = None
    #: (dict) probability of each way to draw the main player's opponent per episode:
    #: 'pfsp' (PFSP over every frozen player), 'uniform' (uniform over them), 'fixed' (uniform
    #: over the fixed opponents only), 'sp' (self-play).
    branch_probs: Mapping[str, float] = declared(dict(pfsp=0.5, uniform=0.2, fixed=0.0, sp=0.3))
    #: (list|None) probability that the main player takes each seat (the env's agents in order)
    #: against a frozen opponent, e.g. [0.3, 0.7] for more practice as the second mover; None:
    #: uniform. Self-play episodes play every seat anyway.
    main_seat_probs: Optional[List[float]] = None
    #: (str) PFSP's weighting of win rate x: 'squared' (1-x)^2, 'variance' x(1-x), 'linear' 1-x.
    pfsp_weighting: str = setting("squared", tuple(WEIGHTINGS))
    #: (list) fixed opponents that are league players from the start: 'random', 'win_block'.
    fixed_opponents: List[str] = declared(["random", "win_block"])
    #: (int) train iterations between snapshots: at least this many, at most twice this many.
    snapshot_every: int = setting(1000, "[1, inf)")
    #: (float) between those, snapshot once the lowest win rate against historicals exceeds this.
    strong_win_rate: float = setting(0.7, "[0, 1]")
    main_exploiter: ExploiterRuleConfig = subsection(ExploiterRuleConfig)
    #: (int|None) keep at most this many historical players (the oldest leave first); None: all.
    max_historical: Optional[int] = setting(None, "[1, inf)", kind=int, optional=True)
    payoff: PayoffConfig = subsection(PayoffConfig)
    rating: RatingConfig = subsection(RatingConfig)
    #: (int) games per (opponent, seat) in the evaluation after each snapshot.
    eval_episode: int = setting(100, "[1, inf)")
    #: (list) the fixed opponents the main player is evaluated against, in both seats.
    eval_opponents: List[str] = declared(["random", "win_block"])
    #: (float|None) stop when an evaluation has at most this loss rate against every evaluation opponent
    #: in each seat and at least stop_win_rate[name] wins against each one named there (None: never stop).
    stop_max_loss_rate: Optional[float] = setting(0.0, "[0, 1]", kind=float, optional=True)
    #: (float|list|None) per evaluation opponent: the win rate the stop rule asks for, one number for every
    #: seat or a list of one per seat, first mover first ([0.97, 0.8]); None: none asked.
    stop_win_rate: Mapping[str, object] = declared(dict(random=SeatRates(0.8), win_block=SeatRates(None)))
    #: (int) an evaluation that meets the stop rule is confirmed on this many more fresh games per
    #: (opponent, seat) that must meet it too (0: no confirmation), so one lucky screen cannot stop a run.
    confirm_episode: int = setting(0, "[0, inf)")
    #: (bool) a run that ends without meeting the stop rule returns the main player as it was at
    #: its best evaluation (fewest losses in the worst (opponent, seat), then the smallest shortfall of
    #: a win rate below its stop_win_rate, then fewest losses, then most wins) -- the league's
    #: ckpt_best; the checkpoints keep the true last state (resume).
    return_best: bool = True


@LEAGUE_REGISTRY.register("one_vs_one")
class League(Configurable):
    """A two-player league around one main player (DI-engine's ``OneVsOneLeague``).

    Args:
        cfg: the ``league`` config section (validated against its :class:`LeagueConfig`).
        make_actor: a historical player's frozen weights -> its ``act(obs, rng)`` (the entry gives
            ``stride.league.frozen(policy, weights)`` wrapped by :func:`stride.league.games.policy_opponent`).
    """

    config_view = LeagueConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None,
                 make_actor: Optional[Callable[[Mapping[str, object]], Opponent]] = None) -> None:
        self._cfg = c = self.typed_config(LeagueConfig, cfg, prefix="league.")
        probs = dict(c.branch_probs)
        unknown = sorted(set(probs) - set(BRANCHES))
        if unknown or not probs or any(float(p) < 0 for p in probs.values()) or abs(sum(map(float, probs.values())) - 1) > 1e-6:
            raise ConfigError(f"league.branch_probs={probs!r} must give probabilities (summing to 1) of: {', '.join(BRANCHES)}")
        self._branches: List[Tuple[str, float]] = [(b, float(probs.get(b, 0.0))) for b in BRANCHES]
        seat_probs = c.main_seat_probs
        if seat_probs is not None and (not isinstance(seat_probs, (list, tuple)) or len(seat_probs) != 2
                                       or any(float(p) < 0 for p in seat_probs) or abs(sum(map(float, seat_probs)) - 1) > 1e-6):
            raise ConfigError(f"league.main_seat_probs={seat_probs!r} must be None or two probabilities (summing to 1) "
                              "of the main player's seat, first mover first")
        self._seat_probs = None if seat_probs is None else [float(p) for p in seat_probs]
        for name in list(c.fixed_opponents) + list(c.eval_opponents):
            get_opponent(str(name))  # a one-line error naming the choices
        self._make_actor = make_actor
        self._actors: Dict[str, Opponent] = {}
        self.payoff = Payoff(c.payoff.decay, c.payoff.min_games)
        r = c.rating
        self.ratings = Ratings(r.mu, r.sigma, r.beta, r.tau, r.draw_probability)
        self.players: Dict[str, Player] = {}
        self._add(Player(MAIN, "main"))
        if c.main_exploiter.use:
            self._add(Player(EXPLOITER, "exploiter"))
        for name in c.fixed_opponents:
            self._add(Player(str(name), "fixed"))
        self.games: Dict[str, int] = dict.fromkeys(self.players, 0)  # games played (undecayed), per player
        self.sp_games = 0
        self.last_snapshot_iter = 0
        self.last_exploiter_snapshot_iter = 0
        # the exploiter's running episodes: episode seed -> (the main snapshot it plays, that snapshot's seat)
        self._exploiter_running: Dict[int, Tuple[str, str]] = {}
        self._running: Dict[int, Optional[Tuple[str, str]]] = {}  # episode seed -> (opponent, its seat) or None

    @property
    def cfg(self) -> LeagueConfig:
        """The typed config this league was built with."""
        return self._cfg

    def _add(self, player: Player, mu: Optional[float] = None) -> None:
        self.players[player.player_id] = player
        self.ratings.add(player.player_id, mu)

    # ---- matchmaking (the env's Matchmaker) ----------------------------------------------------
    def opponents(self) -> List[str]:
        """The frozen players the main player can meet (fixed and historical), in joining order."""
        return [p for p, player in self.players.items() if player.kind not in ("main", "exploiter")]

    def match(self, seed: int, agents: Sequence[str]) -> Optional[Tuple[str, Opponent]]:
        """The opponent and seat of the episode started with ``seed`` (see the module docstring)."""
        if seed not in self._running:
            rng = np.random.default_rng([int(seed), 0x1EA6E])
            branch = self._branches[draw_index([p for _, p in self._branches], rng)][0]
            pool = self.opponents()
            if branch == "fixed":
                pool = [p for p in pool if self.players[p].kind == "fixed"]
            if branch == "sp" or not pool:
                self._running[seed] = None
            else:
                probs = (pfsp_weights([self.payoff.win_rate(MAIN, p) for p in pool], self._cfg.pfsp_weighting)
                         if branch == "pfsp" else np.full(len(pool), 1.0 / len(pool)))
                opponent = pool[draw_index(probs, rng)]
                if self._seat_probs is None:
                    seat = agents[int(rng.integers(len(agents)))]
                else:  # the opponent takes the seat the main player does not
                    seat = agents[1 - draw_index(self._seat_probs, rng)]
                self._running[seed] = (opponent, str(seat))
        chosen = self._running[seed]
        if chosen is None:
            return None
        opponent, seat = chosen
        return seat, self.actor(opponent)

    def actor(self, player_id: str) -> Opponent:
        """A frozen player's ``act(obs, rng)``."""
        if player_id not in self._actors:
            player = self.players[player_id]
            if player.kind == "fixed":
                self._actors[player_id] = get_opponent(player_id)
            elif player.kind == "historical" and player.weights is not None:
                if self._make_actor is None:
                    raise ConfigError("this League was built without make_actor: it cannot play historical players")
                self._actors[player_id] = self._make_actor(player.weights)
            else:
                raise ValueError(f"player {player_id!r} ({player.kind}) is not a frozen player")
        return self._actors[player_id]

    def result(self, seed: int, returns: Mapping[str, float]) -> None:
        """The episode started with ``seed`` ended with the main player's ``returns`` (by agent)."""
        self.add_game(self.finish(seed, returns))

    def finish(self, seed: int, returns: Mapping[str, float]) -> Optional[Tuple[str, str]]:
        """The episode started with ``seed`` ended with the main player's ``returns``: it leaves the
        running episodes; returns ``(opponent, 'win' | 'draw' | 'loss')``, or None for self-play (or
        an episode this league did not start). Nothing is recorded: :meth:`add_game` does that (in
        another process's league too: a Ray collector's :class:`~stride.league.LeagueReplica`)."""
        chosen = self._running.pop(seed, None)
        if chosen is None:
            return None
        score = sum(float(r) for r in returns.values())
        return chosen[0], "win" if score > 0 else "loss" if score < 0 else "draw"

    def add_game(self, game: Optional[Sequence[str]]) -> None:
        """A finished episode as :meth:`finish` gave it: the main player's game against the opponent
        recorded (payoff, ratings, counts), or one more self-play game (None)."""
        if game is None:  # self-play: nothing to rate
            self.sp_games += 1
            return
        opponent, outcome = str(game[0]), str(game[1])
        if opponent not in self.players:  # dropped from the league while the game ran
            return
        self.record(MAIN, opponent, outcome)

    # ---- the main exploiter's matchmaking -------------------------------------------------------
    def exploiter_target(self) -> Optional[str]:
        """The main player as the exploiter meets it: its newest snapshot (None before the first)."""
        own = [p for p in self.historical() if self.players[p].parent_id == MAIN]
        return own[-1] if own else None

    def exploiter_matches(self) -> "ExploiterMatches":
        """The exploiter's envs' matchmaker (see :class:`ExploiterMatches`)."""
        if EXPLOITER not in self.players:
            raise ConfigError("this league has no main exploiter: set league.main_exploiter.use=True")
        return ExploiterMatches(self)

    def match_exploiter(self, seed: int, agents: Sequence[str]) -> Optional[Tuple[str, Opponent]]:
        """The exploiter's episode started with ``seed``: the main player's newest snapshot in a
        uniformly drawn seat (remembered, as :meth:`match`); None (self-play) before any snapshot."""
        if seed not in self._exploiter_running:
            target = self.exploiter_target()
            if target is None:
                return None
            rng = np.random.default_rng([int(seed), 0xE4B1])
            self._exploiter_running[seed] = (target, str(agents[int(rng.integers(len(agents)))]))
        opponent, seat = self._exploiter_running[seed]
        return seat, self.actor(opponent)

    def result_exploiter(self, seed: int, returns: Mapping[str, float]) -> None:
        """The exploiter's episode started with ``seed`` ended with its ``returns`` (by agent)."""
        chosen = self._exploiter_running.pop(seed, None)
        if chosen is None or chosen[0] not in self.players:
            return
        score = sum(float(r) for r in returns.values())
        self.record(EXPLOITER, chosen[0], "win" if score > 0 else "loss" if score < 0 else "draw")

    def record(self, home: str, away: str, outcome: str) -> None:
        """One finished game: payoff, ratings and game counts."""
        self.payoff.update(home, away, outcome)
        self.ratings.update(home, away, outcome)
        self.games[home] = self.games.get(home, 0) + 1
        self.games[away] = self.games.get(away, 0) + 1

    # ---- snapshots -----------------------------------------------------------------------------
    def historical(self) -> List[str]:
        return [p for p, player in self.players.items() if player.kind == "historical"]

    def should_snapshot(self, train_iter: int) -> bool:
        """DI-engine's rule in train iterations (see the module docstring); with no historical player
        yet, the first snapshot comes after ``snapshot_every`` iterations."""
        since = train_iter - self.last_snapshot_iter
        every = self._cfg.snapshot_every
        if since < every:
            return False
        if since >= 2 * every:
            return True
        past = self.historical()
        return not past or min(self.payoff.win_rate(MAIN, p) for p in past) > self._cfg.strong_win_rate

    def should_snapshot_exploiter(self, train_iter: int) -> bool:
        """The exploiter's rule in its own train iterations: none before ``snapshot_every`` since its
        last, always one after twice that, in between once its win rate against the main player's
        newest snapshot exceeds ``main_exploiter.strong_win_rate``."""
        rule = self._cfg.main_exploiter
        since = train_iter - self.last_exploiter_snapshot_iter
        every = rule.snapshot_every
        if since < every:
            return False
        if since >= 2 * every:
            return True
        target = self.exploiter_target()
        return target is not None and self.payoff.win_rate(EXPLOITER, target) > rule.strong_win_rate

    def snapshot(self, weights: Mapping[str, object], train_iter: int, parent: str = MAIN) -> Player:
        """Freeze the ``weights`` (``stride.league.snapshot(policy)``) of ``parent`` (the main player
        or the exploiter) at its ``train_iter`` as a historical player rated from the parent's mean."""
        if parent not in (MAIN, EXPLOITER) or parent not in self.players:
            raise ValueError(f"snapshot parent {parent!r} is not an active player; valid choices: "
                             f"{', '.join(p for p in (MAIN, EXPLOITER) if p in self.players)}")
        player = Player(f"{parent}_{train_iter}", "historical", parent_id=parent, train_iter=int(train_iter),
                        weights=dict(weights))
        if player.player_id in self.players:
            raise ValueError(f"a snapshot of {parent} at train iteration {train_iter} exists already")
        self._add(player, mu=self.ratings.get(parent)[0])
        self.games[player.player_id] = 0
        if parent == MAIN:
            self.last_snapshot_iter = int(train_iter)
        else:
            self.last_exploiter_snapshot_iter = int(train_iter)
        cap = self._cfg.max_historical
        past = self.historical()
        while cap is not None and len(past) > cap:
            self.remove(past.pop(0))
        return player

    def remove(self, player_id: str) -> None:
        """Drop a historical player (its records and rating go with it)."""
        if self.players.get(player_id) is None or self.players[player_id].kind != "historical":
            raise ValueError(f"only historical players leave the league; {player_id!r} is not one")
        del self.players[player_id]
        self._actors.pop(player_id, None)
        self.payoff.remove(player_id)
        self.ratings.remove(player_id)

    def table(self) -> List[Dict[str, object]]:
        """One row per player: id, kind, rating (mu, sigma), games, the main player's win rate against it."""
        rows: List[Dict[str, object]] = []
        for pid, player in self.players.items():
            mu, sigma = self.ratings.get(pid)
            rows.append({"player": pid, "kind": player.kind, "train_iter": player.train_iter, "mu": round(mu, 3),
                         "sigma": round(sigma, 3), "games": self.games.get(pid, 0),
                         "main_win_rate": None if pid == MAIN else round(self.payoff.win_rate(MAIN, pid), 3)})
        return rows

    # ---- exact resume ----------------------------------------------------------------------------
    def state_dict(self) -> Dict[str, object]:
        return {"players": [p.state_dict() for p in self.players.values()],
                "payoff": self.payoff.state_dict(), "ratings": self.ratings.state_dict(),
                "games": dict(self.games), "sp_games": self.sp_games, "last_snapshot_iter": self.last_snapshot_iter,
                "running": [[seed, None if c is None else list(c)] for seed, c in sorted(self._running.items())],
                "last_exploiter_snapshot_iter": self.last_exploiter_snapshot_iter,
                "exploiter_running": [[seed, list(c)] for seed, c in sorted(self._exploiter_running.items())]}

    def follow(self, state: Mapping[str, object]) -> None:
        """Take another league's players, payoff, ratings and counters (its :meth:`state_dict`)
        and keep this one's running episodes and the actors already built for players that stay
        (a historical player's weights never change): a collector process's copy of the league the
        driver keeps (``stride -m league --workers N``), synced before each collect."""
        running, actors = self._running, self._actors
        self.load_state_dict(state)
        self._running = running
        self._actors = {p: act for p, act in actors.items() if p in self.players}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        self.players = {}
        for p in as_list(state["players"], "league 'players'"):
            player = Player.from_state_dict(as_mapping(p, "a league player"))
            self.players[player.player_id] = player
        self._actors = {}
        self.payoff.load_state_dict(as_mapping(state["payoff"], "league 'payoff'"))
        self.ratings.load_state_dict(as_mapping(state["ratings"], "league 'ratings'"))
        self.games = {str(k): as_int(v, "games") for k, v in as_mapping(state["games"], "league 'games'").items()}
        self.sp_games = as_int(state["sp_games"], "league 'sp_games'")
        self.last_snapshot_iter = as_int(state["last_snapshot_iter"], "league 'last_snapshot_iter'")
        self._running = {}
        for entry in as_list(state["running"], "league 'running'"):
            seed, chosen = as_list(entry, "a running episode")
            pair = None if chosen is None else as_list(chosen, "a running episode's opponent")
            self._running[as_int(seed, "episode seed")] = None if pair is None else (str(pair[0]), str(pair[1]))
        # checkpoints written before the exploiter existed have neither key
        self.last_exploiter_snapshot_iter = as_int(state.get("last_exploiter_snapshot_iter", 0),
                                                   "league 'last_exploiter_snapshot_iter'")
        self._exploiter_running = {}
        for entry in as_list(state.get("exploiter_running", []), "league 'exploiter_running'"):
            seed, chosen = as_list(entry, "a running exploiter episode")
            opponent, seat = as_list(chosen, "a running exploiter episode's opponent")
            self._exploiter_running[as_int(seed, "episode seed")] = (str(opponent), str(seat))


class ExploiterMatches:
    """The main exploiter's :class:`~stride.envs.opponents.Matchmaker`: its envs ask the
    league (``League.match_exploiter`` / ``League.result_exploiter``), which keeps the running
    episodes in its own ``state_dict``."""

    def __init__(self, league: League) -> None:
        self.league = league

    def match(self, seed: int, agents: Sequence[str]) -> Optional[Tuple[str, Opponent]]:
        return self.league.match_exploiter(seed, agents)

    def result(self, seed: int, returns: Mapping[str, float]) -> None:
        self.league.result_exploiter(seed, returns)


__all__ = ["League", "ExploiterMatches", "BRANCHES", "MAIN", "EXPLOITER"]
