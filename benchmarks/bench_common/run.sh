#!/usr/bin/env bash
# Shared launcher of the benchmark drivers (dqn/run.sh, onpolicy_sac/run.sh): creates
# benchmarks/.venv-peers on first use (setup_peers.sh), then runs the driver with benchmarks/ (for
# bench_common) and this checkout (Stride) on PYTHONPATH.
#   bash benchmarks/bench_common/run.sh DRIVER.py [driver flags ...]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH="$(cd "$HERE/.." && pwd)"
REPO="$(cd "$BENCH/.." && pwd)"
bash "$HERE/setup_peers.sh"
cd "$REPO"
export PYTHONPATH="$BENCH:$REPO${PYTHONPATH:+:$PYTHONPATH}"
exec "$BENCH/.venv-peers/bin/python" "$@"
