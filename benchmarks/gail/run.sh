#!/usr/bin/env bash
# GAIL on CartPole-v1, Stride against imitation's GAIL (issue 17): creates benchmarks/.venv-imitation on
# first use (setup_imitation.sh), then runs cartpole_gail_vs_imitation.py with Stride's interpreter
# (STRIDE_PY, default .venv/bin/python of this checkout) and this checkout on PYTHONPATH, under nice.
#   bash benchmarks/gail/run.sh --seeds 0 1 2 [--env-step 200000] [--demo DATASET_DIR] [-h]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
STRIDE_PY="${STRIDE_PY:-$REPO/.venv/bin/python}"
[[ -x "$STRIDE_PY" ]] || { echo "no Stride interpreter at $STRIDE_PY: set STRIDE_PY (a python with Stride's dependencies and the minari extra)" >&2; exit 2; }
bash "$HERE/setup_imitation.sh"
cd "$REPO"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
exec nice -n 5 "$STRIDE_PY" "$HERE/cartpole_gail_vs_imitation.py" "$@"
