#!/usr/bin/env bash
# Fixed-budget learning curves (issue 15): Stride vs stable-baselines3 on MinAtar Breakout DQN / PPO and
# Hopper-v5 SAC, same budget and seeds, 100 fresh final episodes each. See README.md.
#   bash benchmarks/curves/run.sh --cases breakout_ppo --seeds 0 1 2 [--budget N] [--jobs 2]
# Creates benchmarks/.venv-peers on first use; Stride is taken from this checkout via PYTHONPATH.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../bench_common/run.sh" "$HERE/bench.py" "$@"
