#!/usr/bin/env bash
# Time to a robust policy (issue 13): Stride vs stable-baselines3 (rl-zoo3 hyper-parameters) on DQN and
# PPO CartPole and SAC Pendulum, under one rule (10-episode screen every 1,000 env steps, confirmed on
# 100 further episodes; train CPU excluding evaluation; medians over seeds).
#   bash benchmarks/learning/run.sh [--algos dqn ppo sac] [--seeds 0 1 2 3 4] [--jobs 2] [--only stride sb3]
# Creates benchmarks/.venv-peers on first use; Stride is taken from this checkout via PYTHONPATH.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../bench_common/run.sh" "$HERE/bench.py" "$@"
