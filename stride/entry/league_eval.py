"""The league's evaluation, shared by ``league_pipeline``'s serial and Ray runs.

After each snapshot the main player plays ``league.eval_episode`` fresh games against each
``league.eval_opponents`` in every seat (:func:`stride.league.play_games`); the row -- snapshot, the
main player's TrueSkill rating (mu, sigma), games, won / drawn / lost per opponent and seat, win
rates, train CPU-seconds -- goes to ``<exp>/league.csv``, TensorBoard (``league/...``) and the log
(:func:`league_table`), and :meth:`LeagueEvaluation.evaluate` says whether the stop rule holds.
"""

from __future__ import annotations

import os
import time
from typing import Dict, List, Mapping, Optional, Tuple

from ..config import Config
from ..config.compile import env_kwargs
from ..envs import PettingZooEnv
from ..league import League, play_games, policy_opponent
from ..league.league import MAIN
from ..policy.base_policy import Policy
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
        self.seed = int(cfg.seed) * 1_000_003 + 500_000_000  # fresh games, apart from training's episode seeds
        self.csv = ProgressCSV(os.path.join(exp, LEAGUE_CSV))
        self.tb = tb
        self.clock = RunClock()  # in the checkpoint with the best evaluation: a resumed run's clocks go on
        self.last_return: Optional[float] = None
        self.best: Optional[Tuple[Tuple[float, int, int], str]] = None  # (rank key: lower is better, snapshot)

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
        worst, lost, won = as_list(rank, "evaluation rank")
        self.best = ((as_number(worst, "rank"), int(as_number(lost, "rank")), int(as_number(won, "rank"))), str(snapshot))

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
        worst, lost_all, won_all_opp = 0.0, 0, 0
        for opponent in self.league_cfg.eval_opponents:
            won_all = 0
            for seat in self.seats:
                w, d, l = play_games(self.env_cfg, actor, str(opponent), seat, n, self.seed)
                row.update({f"{opponent}_{seat}_won": w, f"{opponent}_{seat}_drawn": d, f"{opponent}_{seat}_lost": l})
                won_all += w
                total, count = total + w - l, count + n
                worst, lost_all, won_all_opp = max(worst, l / n), lost_all + l, won_all_opp + w
                if stop and l / n > float(self.league_cfg.stop_max_loss_rate):
                    stop = False
                need = dict(self.league_cfg.stop_win_rate).get(str(opponent))
                if stop and need is not None and w / n < float(need):
                    stop = False
            row[f"win_rate_{opponent}"] = round(won_all / (n * len(self.seats)), 4)
        self.clock.add_eval(time.process_time() - start, time.perf_counter() - wall)
        self.last_return = total / max(count, 1)
        rank = (worst, lost_all, -won_all_opp)
        if self.best is None or rank < self.best[0]:
            self.best = (rank, snapshot)
        row.update(train_cpu_seconds=round(self.clock.train_cpu(), 3), wall_seconds=round(self.clock.wall(), 3))
        self.csv.write(row)
        if self.tb is not None:
            for key in ("mu", "sigma", *[f"win_rate_{o}" for o in self.league_cfg.eval_opponents]):
                self.tb.add_scalar(f"league/{key}", as_number(row[key], key), envstep)
        return stop, row

    def summary(self) -> Dict[str, object]:
        return {"eval_return": self.last_return, "best_snapshot": None if self.best is None else self.best[1],
                "train_cpu_seconds": self.train_cpu(),
                "eval_cpu_seconds": self.clock.eval_cpu, "eval_wall_seconds": self.clock.eval_wall,
                "wall_seconds": self.clock.wall()}


def league_table(league: League, row: Mapping[str, object]) -> str:
    """The league's players as a text table, after the evaluation row."""
    lines = [f"[league] snapshot {row['snapshot']} at train_iter={row['train_iter']} envstep={row['envstep']}: "
             + ", ".join(f"{k}={v}" for k, v in row.items() if k.startswith("win_rate_")),
             f"{'player':>16} {'kind':>10} {'mu':>8} {'sigma':>7} {'games':>7} {'main_wr':>7}"]
    for r in league.table():
        wr = "-" if r["main_win_rate"] is None else f"{r['main_win_rate']:.3f}"
        lines.append(f"{r['player']:>16} {r['kind']:>10} {r['mu']:>8.3f} {r['sigma']:>7.3f} {r['games']:>7} {wr:>7}")
    return "\n".join(lines)
