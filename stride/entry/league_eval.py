"""The league's evaluation, shared by ``league_pipeline``'s serial and Ray runs.

After each snapshot the main player plays ``league.eval_episode`` fresh games against each
``league.eval_opponents`` in every seat (:func:`stride.league.play_games`); the row -- snapshot, the
main player's TrueSkill rating (mu, sigma), games, won / drawn / lost per opponent and seat, win
rates, train CPU-seconds -- goes to ``<exp>/league.csv``, TensorBoard (``league/...``) and the log
(:func:`league_table`), and :meth:`LeagueEvaluation.evaluate` says whether the stop rule holds.
With ``league.confirm_episode`` an evaluation that meets the rule plays that many more fresh games
per opponent and seat, and the run stops only if they meet it too (the serial evaluator's
screen-then-confirm): a player that loses one game in 300 passes a 500-game screen one time in five.
"""

from __future__ import annotations

import os
import time
from typing import Dict, List, Mapping, Optional, Tuple

from ..config import Config
from ..config.compile import env_kwargs
from ..envs import PettingZooEnv
from ..envs.opponents import Opponent
from ..league import League, play_games, policy_opponent
from ..league.league import MAIN
from ..policy.base_policy import Policy
from ..utils.errors import ConfigError
from ..utils.log import ProgressCSV
from ..utils.narrow import as_list, as_mapping, as_number
from ..worker.protocols import ScalarWriter
from .clock import RunClock

LEAGUE_CSV = "league.csv"


class LeagueEvaluation:
    """The main player's games against the evaluation opponents after each snapshot, logged to
    ``league.csv``, TensorBoard and the text log, with the CPU time split (train CPU-seconds are
    the process's CPU time less these evaluations')."""

    def __init__(self, cfg: Config, exp: str, tb: Optional[ScalarWriter]) -> None:
        self.env_cfg = env_kwargs(cfg.env)
        probe = PettingZooEnv(cfg=dict(self.env_cfg, opponent=None))
        self.seats: List[str] = probe.agents
        probe.close()
        self.league_cfg = cfg.league
        for name, rate in dict(cfg.league.stop_win_rate).items():
            if isinstance(rate, (list, tuple)) and len(rate) != len(self.seats):
                raise ConfigError(f"league.stop_win_rate.{name}={list(rate)!r} gives {len(rate)} seats' win rates; "
                                  f"valid choices: one number, or one per seat ({', '.join(self.seats)})")
        self.seed = int(cfg.seed) * 1_000_003 + 500_000_000  # fresh games, apart from training's episode seeds
        self.csv = ProgressCSV(os.path.join(exp, LEAGUE_CSV))
        self.tb = tb
        self.clock = RunClock()  # in the checkpoint with the best evaluation: a resumed run's clocks go on
        self.last_return: Optional[float] = None
        # (rank key: lower is better, snapshot): the worst loss rate of an (opponent, seat), the largest
        # shortfall of a win rate below its stop_win_rate, the losses, minus the wins
        self.best: Optional[Tuple[Tuple[float, float, int, int], str]] = None

    def train_cpu(self) -> float:
        return self.clock.train_cpu()

    @property
    def eval_cpu(self) -> float:
        """CPU-seconds of the evaluations so far."""
        return self.clock.eval_cpu

    def state_dict(self) -> Dict[str, object]:
        """The best evaluation so far (what ``return_best`` returns), so a resumed run picks alike,
        and the clocks, so its CPU and wall seconds go on."""
        return {"best": None if self.best is None else [list(self.best[0]), self.best[1]],
                "clock": self.clock.state_dict()}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        clock = state.get("clock")  # older checkpoints: none
        if clock is not None:
            self.clock.load_state_dict(as_mapping(clock, "evaluation 'clock'"))
        best = state.get("best")
        if best is None:
            self.best = None
            return
        rank, snapshot = as_list(best, "evaluation 'best'")
        values = as_list(rank, "evaluation rank")
        if len(values) == 3:  # checkpoints before the shortfall was ranked
            values = [values[0], 0.0, *values[1:]]
        worst, short, lost, won = values
        self.best = ((as_number(worst, "rank"), as_number(short, "rank"), int(as_number(lost, "rank")),
                      int(as_number(won, "rank"))), str(snapshot))

    def evaluate(self, policy: Policy, league: League, snapshot: str, train_iter: int, envstep: int
                 ) -> Tuple[bool, Dict[str, object]]:
        """Play, log, and say whether the stop rule holds."""
        start, wall = time.process_time(), time.perf_counter()
        n = int(self.league_cfg.eval_episode)
        actor = policy_opponent(policy.eval_mode)
        mu, sigma = league.ratings.get(MAIN)
        row: Dict[str, object] = {"snapshot": snapshot, "train_iter": train_iter, "envstep": envstep,
                               "mu": round(mu, 3), "sigma": round(sigma, 3), "games": league.games.get(MAIN, 0),
                               "historical": len(league.historical())}
        stop = self.league_cfg.stop_max_loss_rate is not None
        total, count = 0.0, 0
        worst, short, lost_all, won_all_opp = 0.0, 0.0, 0, 0
        for opponent in self.league_cfg.eval_opponents:
            won_all = 0
            for seat in self.seats:
                w, d, l = play_games(self.env_cfg, actor, str(opponent), seat, n, self.seed)
                row.update({f"{opponent}_{seat}_won": w, f"{opponent}_{seat}_drawn": d, f"{opponent}_{seat}_lost": l})
                won_all += w
                total, count = total + w - l, count + n
                worst, lost_all, won_all_opp = max(worst, l / n), lost_all + l, won_all_opp + w
                short = max(short, self._win_rate_needed(str(opponent), seat) - w / n)
                stop = stop and self._meets_stop_rule(str(opponent), seat, w, l, n)
            row[f"win_rate_{opponent}"] = round(won_all / (n * len(self.seats)), 4)
        confirm = int(self.league_cfg.confirm_episode)
        row.update(confirm_won="", confirm_drawn="", confirm_lost="", confirmed="")  # fixed columns: league.csv's header
        if stop and confirm > 0:
            stop = self._confirm(actor, confirm, row)
        self.clock.add_eval(time.process_time() - start, time.perf_counter() - wall)
        self.last_return = total / max(count, 1)
        rank = (worst, short, lost_all, -won_all_opp)
        if self.best is None or rank < self.best[0]:
            self.best = (rank, snapshot)
        row.update(train_cpu_seconds=round(self.clock.train_cpu(), 3), wall_seconds=round(self.clock.wall(), 3))
        self.csv.write(row)
        if self.tb is not None:
            for key in ("mu", "sigma", *[f"win_rate_{o}" for o in self.league_cfg.eval_opponents]):
                self.tb.add_scalar(f"league/{key}", as_number(row[key], key), envstep)
        return stop, row

    def _meets_stop_rule(self, opponent: str, seat: str, won: int, lost: int, n: int) -> bool:
        """``stop_max_loss_rate`` and ``stop_win_rate[opponent]`` (its entry for ``seat`` when a list)
        on ``n`` games of one (opponent, seat)."""
        if lost / n > float(self.league_cfg.stop_max_loss_rate):
            return False
        return won / n >= self._win_rate_needed(opponent, seat)

    def _win_rate_needed(self, opponent: str, seat: str) -> float:
        """``stop_win_rate[opponent]`` for ``seat`` (0 where none is set)."""
        need = dict(self.league_cfg.stop_win_rate).get(opponent)
        if isinstance(need, (list, tuple)):
            need = need[self.seats.index(seat)]
        return 0.0 if need is None else float(need)

    def _confirm(self, actor: Opponent, n: int, row: Dict[str, object]) -> bool:
        """``n`` more fresh games per (opponent, seat) (seeds after the screen's); whether they meet the
        stop rule too. The row gets their won / drawn / lost summed over the cells played (the first
        cell that fails ends the confirmation) and ``confirmed``."""
        seed = self.seed + int(self.league_cfg.eval_episode)
        confirmed, won, drawn, lost = True, 0, 0, 0
        for opponent in self.league_cfg.eval_opponents:
            for seat in self.seats:
                if confirmed:
                    w, d, l = play_games(self.env_cfg, actor, str(opponent), seat, n, seed)
                    won, drawn, lost = won + w, drawn + d, lost + l
                    confirmed = self._meets_stop_rule(str(opponent), seat, w, l, n)
        row.update(confirm_won=won, confirm_drawn=drawn, confirm_lost=lost, confirmed=confirmed)
        return confirmed

    def summary(self) -> Dict[str, object]:
        return {"eval_return": self.last_return, "best_snapshot": None if self.best is None else self.best[1],
                "train_cpu_seconds": self.train_cpu(),
                "eval_cpu_seconds": self.clock.eval_cpu, "eval_wall_seconds": self.clock.eval_wall,
                "wall_seconds": self.clock.wall()}


def league_table(league: League, row: Mapping[str, object]) -> str:
    """The league's players as a text table, after the evaluation row."""
    lines = [f"[league] snapshot {row['snapshot']} at train_iter={row['train_iter']} envstep={row['envstep']}: "
             + ", ".join(f"{k}={v}" for k, v in row.items() if k.startswith("win_rate_") or (k == "confirmed" and v != "")),
             f"{'player':>16} {'kind':>10} {'mu':>8} {'sigma':>7} {'games':>7} {'main_wr':>7}"]
    for r in league.table():
        wr = "-" if r["main_win_rate"] is None else f"{r['main_win_rate']:.3f}"
        lines.append(f"{r['player']:>16} {r['kind']:>10} {r['mu']:>8.3f} {r['sigma']:>7.3f} {r['games']:>7} {wr:>7}")
    return "\n".join(lines)
