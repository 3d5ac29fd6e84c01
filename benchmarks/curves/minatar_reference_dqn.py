"""MinAtar's own reference DQN (``examples/dqn.py`` of github.com/kenjyoung/MinAtar), run unmodified.

Issue 32 compares Stride's MinAtar DQN at 1M frames with "a run of MinAtar's ``examples/dqn.py``, the
paper's settings". That script is not in the ``minatar`` wheel, so this takes its path (a clone of the
MinAtar repository), imports it, and calls its ``dqn()`` with nothing changed but the frame budget
(its module constant ``NUM_FRAMES``, 5M in the script) and a seeded environment; one torch thread, as
every contestant in ``benchmarks/``. Its score is what the script itself logs: the exponential moving
average of training-episode returns (``avg_return = 0.99 * avg_return + 0.01 * G``, epsilon-greedy at
0.1 after the first 100k frames), reported here at the budget, with the mean of the last 100 training
episodes beside it. A killed run continues from the script's own checkpoint (``--save``: every 1,000
episodes) when re-run with the same ``--out``; every load is weights-only (the script's two classes allowlisted).

The logged average is of epsilon-greedy training episodes, so it is not the figure the harness gives a
contestant. At the end the script's final network is also scored as the harness scores Stride and SB3:
greedy, on the same 100 fresh episodes (``bench_common.evaluate``: 8 envs seeded ``30000 + seed + 1000 i``,
sticky actions 0.1), on the game's full six-action set the script trains on. Re-running a finished ``--out``
does not train again: it scores the saved final weights.

    git clone https://github.com/kenjyoung/MinAtar  # its examples/dqn.py, commit 4241f24 for issue 32
    benchmarks/.venv-peers/bin/python benchmarks/curves/minatar_reference_dqn.py \
        --dqn-py MinAtar/examples/dqn.py --game space_invaders --frames 1000000 --seed 0 --out DIR
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import random
import re
import sys
import time
import types
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent.parent)]  # bench_common, and this checkout's stride
from bench_common.minatar_chw import GAMES, PREFIX  # noqa: E402

# the script's game names (minatar.Environment's) -> the Gymnasium ids' (SpaceInvaders -> space_invaders)
GYM_NAMES = {re.sub(r"(?<!^)(?=[A-Z])", "_", game).lower(): game for game in GAMES}


def _save_whole(obj: object, path: str) -> None:
    """``torch.save`` to ``path`` whole or not at all: a temporary file, then an atomic rename."""
    tmp = f"{path}.tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _ema(returns: list[float]) -> float:
    """The script's logged average: ``avg = 0.99 * avg + 0.01 * G`` from 0, over every episode."""
    avg = 0.0
    for g in returns:
        avg = 0.99 * avg + 0.01 * g
    return avg


def score_fresh(net: torch.nn.Module, game: str, seed: int, episodes: int) -> list[float]:
    """Returns of ``net`` (greedy) on the harness's fresh episodes, with all six MinAtar actions.

    Stride and SB3 play the minimal action set (``MinAtarCHW/<Game>-v1``); the script's network has an
    output per action of the full set, so it plays the same game behind the same ``ChannelFirst``
    observation on ``MinAtarCHWFullActions/<Game>-v1`` (``use_minimal_action_set=False``).
    """
    from bench_common.evaluate import evaluate_batched

    def act(obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return net(torch.as_tensor(obs, dtype=torch.float32)).argmax(1).numpy()

    return evaluate_batched(act, episodes, 8, 30_000 + seed, f"{PREFIX}MinAtarCHWFullActions/{GYM_NAMES[game]}-v1")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dqn-py", required=True, type=Path, help="MinAtar's examples/dqn.py")
    ap.add_argument("--game", required=True, help="a MinAtar game: breakout, space_invaders, asterix, freeway, seaquest")
    ap.add_argument("--frames", type=int, default=1_000_000, help="frame budget (the script's NUM_FRAMES; default 1M)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, type=Path, help="folder for the script's checkpoint, data and the summary")
    ap.add_argument("--fresh-episodes", type=int, default=100, help="fresh episodes the final network is scored on")
    args = ap.parse_args()
    if not args.dqn_py.is_file():
        print(f"minatar_reference_dqn: --dqn-py {args.dqn_py} is not a file (MinAtar's examples/dqn.py)", file=sys.stderr)
        return 2
    if args.game not in GYM_NAMES:
        print(f"minatar_reference_dqn: --game {args.game!r} is not a MinAtar game; choose one of {sorted(GYM_NAMES)}",
              file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(filename=args.out / "dqn.log", level=logging.INFO, format="%(asctime)s %(message)s")
    torch.set_num_threads(1)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    spec = importlib.util.spec_from_file_location("minatar_examples_dqn", args.dqn_py)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its checkpoint pickles classes of this module
    spec.loader.exec_module(module)
    module.NUM_FRAMES = args.frames
    # its checkpoint pickles its replay buffer (a class of its own, holding namedtuples of tensors): allow
    # exactly those two classes, so its own torch.load (weights only by default) resumes and runs no code
    torch.serialization.add_safe_globals([module.replay_buffer, module.transition])

    from minatar import Environment
    env = Environment(args.game)
    env.seed(args.seed)
    prefix = str(args.out / f"{args.game}_s{args.seed}")
    checkpoint = prefix + "_checkpoint"
    if os.path.exists(checkpoint) and os.path.getsize(checkpoint) == 0:  # cut by a kill before saves were whole
        os.replace(checkpoint, checkpoint + ".empty")
        print(f"{checkpoint} was empty (a save cut short): moved aside, starting over", file=sys.stderr)
    data_path = prefix + "_data_and_weights"
    summary_path = args.out / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() and os.path.exists(data_path) else None
    if summary is None:  # not finished: train (from the script's checkpoint when there is one)
        summary = train(module, env, prefix, checkpoint, args)
    data = torch.load(data_path, weights_only=True)
    net = module.QNetwork(env.state_shape()[2], env.num_actions())
    net.load_state_dict(data["policy_net_state_dict"])
    net.eval()
    fresh = score_fresh(net, args.game, args.seed, args.fresh_episodes)
    summary.update(fresh_episodes=len(fresh), fresh_mean=round(float(np.mean(fresh)), 3),
                   fresh_std=round(float(np.std(fresh)), 3), fresh_returns=fresh)
    summary_path.write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary))
    return 0


def train(module: types.ModuleType, env: object, prefix: str, checkpoint: str, args: argparse.Namespace) -> dict:
    """Run the script's ``dqn()`` to the budget; the summary of what it logged (and its episodes.csv)."""
    load = checkpoint if os.path.exists(checkpoint) else None
    # the script's torch.save writes in place: a kill mid-save left an empty checkpoint that cannot resume.
    # Its saves go through a torch whose save writes a temporary file and renames it (whole or absent).
    module.torch = types.ModuleType("torch_saving_whole")
    module.torch.__dict__.update(torch.__dict__)
    module.torch.save = _save_whole
    cpu0, wall0 = time.process_time(), time.perf_counter()
    module.dqn(env, False, False, prefix, store_intermediate_result=True, load_path=load)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0

    data = torch.load(prefix + "_data_and_weights", weights_only=True)
    returns = [float(g) for g in data["returns"]]
    frames = [int(t) for t in data["frame_stamps"]]
    with open(args.out / "episodes.csv", "w") as f:
        f.write("frame,return\n")
        f.writelines(f"{t},{g}\n" for t, g in zip(frames, returns))
    summary = {
        "script": str(args.dqn_py), "game": args.game, "seed": args.seed, "frames": frames[-1] if frames else 0,
        "episodes": len(returns), "avg_return_logged": round(_ema(returns), 3),
        "mean_last_100_episodes": round(float(np.mean(returns[-100:])), 3) if returns else None,
        "cpu_seconds_this_process": round(cpu, 1), "wall_seconds_this_process": round(wall, 1),
        "resumed_from_checkpoint": load is not None,
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


if __name__ == "__main__":
    sys.exit(main())
