"""Learning on ``-m parallel`` as a user judges it (issue 29): per seed, the run of the ``stride``
command to the config's stop value (or ``--env-step``), then the RETURNED policy (the run's final
checkpoint) over 100 fresh episodes (``eval_pipeline``, seeds apart from training's).

    python benchmarks/parallel/learning.py -c stride/zoo/cartpole/config/parallel/cartpole_dqn_config.py -s 0 1 2 3 4

Prints one JSON row per seed (env steps and wall seconds to the stop, train iterations, the replay
ratio target / achieved, staleness, the fresh-episode mean and min, the 1-minute load before and
after) and a summary line: how many seeds' returned policies hold the stop value.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def load() -> str:
    """The 1-minute load average."""
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--config", required=True)
    parser.add_argument("-s", "--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--env-step", type=int, default=200_000, help="a cap per run (default 200k)")
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--out", default=None, help="also append the rows to this file")
    args = parser.parse_args()
    from stride.entry.eval_entry import eval_pipeline

    root = tempfile.mkdtemp(prefix="stride_parallel_learning_")
    rows = []
    for seed in args.seeds:
        exp = os.path.join(root, f"seed{seed}")
        load0, t0 = load(), time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "stride", "-m", "parallel", "-c", args.config, "-s", str(seed),
                               "--exp-name", exp, "--no-progress", "--env-step", str(args.env_step)],
                              capture_output=True, text=True)
        row: dict = {"seed": seed, "rc": proc.returncode}
        if proc.returncode != 0:
            row["error"] = proc.stderr[-800:]
        else:
            with open(os.path.join(exp, "result.json")) as f:
                r = json.load(f)
            ev = eval_pipeline(r["final_checkpoint"], n_episode=args.episodes)
            row.update({k: r.get(k) for k in ("stop", "env_step", "train_iter", "eval_return", "replay_ratio",
                                              "replay_ratio_achieved", "stale_dropped", "staleness_mean", "batches")})
            row.update(wall_seconds=round(float(r["wall_seconds"]), 1), ray_start=r.get("ray_start_seconds"),
                       command_seconds=round(time.perf_counter() - t0, 1), fresh_mean=ev["mean"], fresh_min=ev["min"],
                       fresh_seed=ev["seed"], stop_value=ev.get("stop_value"), load=[load0, load()])
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")
    done = [r for r in rows if r["rc"] == 0]
    stop_value = next((r["stop_value"] for r in done if r.get("stop_value") is not None), None)
    held = [r for r in done if stop_value is not None and r["fresh_mean"] >= stop_value]
    if done:
        print(f"{args.config}: returned policies holding {stop_value} over {args.episodes} fresh episodes: "
              f"{len(held)} of {len(rows)} seeds; median env steps to the stop "
              f"{statistics.median(r['env_step'] for r in done):.0f}, median fresh mean "
              f"{statistics.median(r['fresh_mean'] for r in done):.1f}", flush=True)
    return 0 if len(held) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
