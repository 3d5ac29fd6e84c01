#!/usr/bin/env bash
# Replay buffer throughput (issue 4): Stride naive/advanced vs Tianshou, TorchRL, SB3, bare NumPy ring.
#   bash benchmarks/buffers/run.sh [--quick] [--reps 5] [--only bare stride_naive ...] [--cases float4 atari]
# Creates benchmarks/.venv-buffers on first use (setup_venv.sh); Stride comes from this checkout.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
bash "$HERE/setup_venv.sh"
cd "$REPO"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
exec "$REPO/benchmarks/.venv-buffers/bin/python" "$HERE/bench.py" "$@"
