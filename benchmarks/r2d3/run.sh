#!/usr/bin/env bash
# R2D3 against R2D2, seeds 0-2, same config and budget: MountainCar-v0 (sparse reward; scripted expert's
# demonstrations) and CartPole POMDP (dense reward; an R2D2 expert's demonstrations through collect_demo).
# Reports: benchmarks/results/r2d3_<env>_<time>/report.txt (see bench.py's docstring).
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-.venv/bin/python}
stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
nice -n 5 "$PY" benchmarks/r2d3/bench.py --env mountaincar --expert-policy scripted --env-step 60000 \
    --seeds 0 1 2 --out "benchmarks/results/r2d3_mountaincar_$stamp" "$@"
nice -n 5 "$PY" benchmarks/r2d3/bench.py --env cartpole_pomdp --expert-policy r2d2 --expert-seed 100 \
    --expert-stop 475 --expert-env-step 120000 --env-step 60000 --seeds 0 1 2 \
    --out "benchmarks/results/r2d3_cartpole_pomdp_$stamp" "$@"
