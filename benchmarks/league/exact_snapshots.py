"""Exact outcomes of every main-player snapshot of a tic-tac-toe league run (issue 19).

Reads the run's newest checkpoint (its league holds every snapshot's weights) and prints, per main
snapshot, the exact probabilities of win / draw / loss against a random player and the one-step
lookahead in each seat, and the number of lines a perfect adversary wins against it per seat
(``stride.testing.board_games.exact_outcomes`` / ``losing_lines``): where 100 sampled games only
say "no loss seen", these say whether a loss is possible at all.

Run from the repository root: ``python benchmarks/league/exact_snapshots.py <exp dir> [snapshot ...]``.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import tempfile

import torch

from stride.entry.serial_entry import load_cfg
from stride.entry.utils import build_policy
from stride.league import frozen
from stride.testing.board_games import exact_outcomes, losing_lines
from stride.utils.registry import import_components
from stride.zoo.pettingzoo.config.tictactoe_league_config import create_config, main_config


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("exp")
    ap.add_argument("snapshots", nargs="*", help="only these (default: every main snapshot)")
    args = ap.parse_args()
    import_components()
    ckpts = glob.glob(os.path.join(args.exp, "ckpt", "iteration_*.pth.tar"))
    if not ckpts:
        raise SystemExit(f"no checkpoint under {args.exp}/ckpt")
    newest = max(ckpts, key=lambda p: int(re.findall(r"iteration_(\d+)", p)[-1]))
    league = torch.load(newest, weights_only=True)["components"]["league"]
    cfg, _ = load_cfg([main_config, create_config], 0, tempfile.mkdtemp(prefix="exact_"), None)
    policy = build_policy(cfg)
    print("snapshot      " + "  ".join(f"{o}-{s} W/D/L %" for o in ("rand", "look") for s in ("1st", "2nd"))
          + "  losing lines 1st/2nd")
    for p in league["players"]:
        if p["kind"] != "historical" or p["parent_id"] != "main" or (args.snapshots and p["player_id"] not in args.snapshots):
            continue
        ev = frozen(policy, p["weights"])
        cells = [exact_outcomes(ev, opp, seat) for opp in ("random", "lookahead") for seat in (0, 1)]
        text = "  ".join(f"{100 * w:5.1f}/{100 * d:4.1f}/{100 * l:4.2f}" for w, d, l in cells)
        print(f"{p['player_id']:<13} {text}  {len(losing_lines(ev, 0))}/{len(losing_lines(ev, 1))}", flush=True)


if __name__ == "__main__":
    main()
