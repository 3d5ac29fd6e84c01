#!/usr/bin/env bash
# DQN CartPole speed benchmark (issue 2): Stride vs stable-baselines3 (rl-zoo3 hyper-parameters)
# vs a bare PyTorch floor, plus collector throughput.
#   bash benchmarks/dqn/run.sh [--seeds 0 1 2 3 4] [--max-env-steps 100000] [--only stride floor sb3 collector]
# Creates benchmarks/.venv-peers on first use; Stride is taken from this checkout via PYTHONPATH.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../bench_common/run.sh" "$HERE/bench.py" "$@"
