#!/usr/bin/env bash
# PPO (CartPole-v1) and SAC (Pendulum-v1) speed benchmark (issue 5): Stride vs stable-baselines3
# (rl-zoo3 hyper-parameters) vs CleanRL-equivalent PPO settings (bare PyTorch) vs bare PyTorch floors.
#   bash benchmarks/onpolicy_sac/run.sh [--seeds 0 1 2 3 4] [--stride-ref REF] [--only stride_ppo ...]
# Creates benchmarks/.venv-peers on first use; Stride is taken from this checkout via PYTHONPATH.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../bench_common/run.sh" "$HERE/bench.py" "$@"
