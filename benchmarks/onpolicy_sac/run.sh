#!/usr/bin/env bash
# PPO (CartPole-v1) and SAC (Pendulum-v1) speed benchmark (issue 5): Stride vs stable-baselines3
# (rl-zoo3 hyper-parameters) vs CleanRL-equivalent PPO settings (bare PyTorch) vs bare PyTorch floors.
#   bash benchmarks/onpolicy_sac/run.sh [--seeds 0 1 2 3 4] [--stride-ref REF] [--only stride_ppo ...]
# Reuses benchmarks/.venv-peers (created by ../dqn/setup_peers.sh if missing); Stride via PYTHONPATH.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
bash "$REPO/benchmarks/dqn/setup_peers.sh"
cd "$REPO"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
exec "$REPO/benchmarks/.venv-peers/bin/python" "$HERE/bench.py" "$@"
