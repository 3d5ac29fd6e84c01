#!/usr/bin/env bash
# Issue 16's benchmark: collector scaling and overheads of the parallel pipeline, IMPALA to 475 vs RLlib.
#   bash benchmarks/parallel/run.sh [--cases scaling overhead impala] [--seeds 0 1 2] [-h for all flags]
# Stride runs in the checkout's .venv (needs the [dist] extra: ray); RLlib in benchmarks/.venv-rllib
# (gitignored), created here if missing (setup_rllib.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PY="${STRIDE_PYTHON:-$REPO/.venv/bin/python}"
"$PY" -c "import ray" 2>/dev/null || { echo "run.sh: $PY has no ray: pip install -c constraints.txt -e '.[dist]'" >&2; exit 2; }
bash "$HERE/setup_rllib.sh"
cd "$REPO"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
export RAY_USAGE_STATS_ENABLED=0
uptime
exec "$PY" "$HERE/bench.py" "$@"
