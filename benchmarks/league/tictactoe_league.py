"""Learning check of the self-play league on tic-tac-toe or connect four (Stride only; issue 19).

Trains ``stride.zoo.pettingzoo.config.<game>_league_config`` per seed (``league_pipeline``, at
most ``--env-step`` env steps; the config's stop rule may end it earlier), then plays the returned
main player in 100 fresh games per opponent and seat on PettingZoo's own env (``tictactoe_v3`` /
``connect_four_v3``; ``stride.testing.board_games.play_native``: a random player and an
independent one-step lookahead) and prints won / drawn / lost, env steps, train CPU-seconds and
the rating per snapshot; on tic-tac-toe also the exact loss probabilities of the same player
against both in the second seat and the number of lines a perfect adversary wins against it per
seat (``exact_outcomes``, ``losing_lines``): what the 100 games sample.

Run from the repository root: ``python benchmarks/league/tictactoe_league.py --seeds 0 1 2``, or
with ``--game connect_four`` (its own default budget).
"""

from __future__ import annotations

import argparse
import ast
import copy
import csv
import importlib
import json
import os
import tempfile
from typing import Dict

from stride.entry import league_pipeline
from stride.entry.cli import apply_settings
from stride.testing.board_games import exact_outcomes, losing_lines, play_native

#: --game -> (PettingZoo env the games are played on, default env-step budget)
GAMES = {"tictactoe": ("tictactoe_v3", 300_000), "connect_four": ("connect_four_v3", 150_000)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--game", choices=sorted(GAMES), default="tictactoe")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--env-step", type=int, default=None, help="default: 300,000 (tic-tac-toe), 150,000 (connect four)")
    ap.add_argument("--workers", type=int, default=1,
                    help="collectors: 1 the serial league, N > 1 N collector actors on Ray (league_pipeline(workers=N))")
    ap.add_argument("--out", default=None, help="experiment folders go here (default: a temporary folder)")
    ap.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                    help="as the command's --set: a dotted key of the config, a Python literal value")
    args = ap.parse_args()
    settings = []
    for text in args.settings:
        key, _, raw = text.partition("=")
        try:
            value: object = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        settings.append((key.split("."), value))
    native, default_budget = GAMES[args.game]
    env_step = default_budget if args.env_step is None else args.env_step
    zoo = importlib.import_module(f"stride.zoo.pettingzoo.config.{args.game}_league_config")
    main = apply_settings(copy.deepcopy(zoo.main_config), settings)
    create_config = zoo.create_config
    root = args.out or tempfile.mkdtemp(prefix=f"league_{args.game}_")
    header = "seed  env_steps  steps/s  train_cpu_s  rand-1st W/D/L  rand-2nd W/D/L  look-1st W/D/L  look-2nd W/D/L  mu by snapshot"
    lines = []
    for seed in args.seeds:
        policy = league_pipeline([main, create_config], seed=seed, max_env_step=env_step,
                                 exp_name=os.path.join(root, f"seed{seed}"), progress=False, workers=args.workers)
        r = policy.result
        # training's rate: env steps over the run's wall time less the league's evaluations (both pipelines
        # wait for them) and Ray's start (Ray run only)
        rate = r["env_step"] / (r["wall_seconds"] - r["eval_wall_seconds"] - r.get("ray_start_seconds", 0.0))
        games = [play_native(policy.eval_mode, native, opp, seat, 100, seed=900_000)
                 for opp in ("random", "lookahead") for seat in (0, 1)]
        exact: Dict[str, object] = {}
        if args.game == "tictactoe":  # the whole game tree: exact, not sampled
            exact = {f"{opp}_2nd_loss_pct": round(100 * exact_outcomes(policy.eval_mode, opp, 1)[2], 3)
                     for opp in ("random", "lookahead")}
            exact.update({f"losing_lines_{n}": len(losing_lines(policy.eval_mode, seat))
                          for seat, n in ((0, "1st"), (1, "2nd"))})
        mus = [row["mu"] for row in csv.DictReader(open(os.path.join(r["exp_dir"], "league.csv")))]
        cells = "  ".join(f"{w:>4}/{d:>2}/{l:>2}  " for w, d, l in games)
        lines.append(f"{seed:>4}  {r['env_step']:>9}  {rate:>7.0f}  {r['train_cpu_seconds']:>11.1f}  {cells}{' '.join(mus)}")
        print(json.dumps({"seed": seed, "workers": args.workers, "env_step": r["env_step"], "env_steps_per_s": rate,
                          "wall_seconds": r["wall_seconds"], "eval_wall_seconds": r["eval_wall_seconds"],
                          "ray_start_seconds": r.get("ray_start_seconds"), "train_cpu_seconds": r["train_cpu_seconds"],
                          "stop": r["stop"], "returned_snapshot": r.get("returned_snapshot"), "games": games, "mu": mus,
                          "exploiter_env_step": r.get("exploiter_env_step"), **exact}), flush=True)
    print(header)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
