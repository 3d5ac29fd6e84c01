#!/usr/bin/env bash
# Create benchmarks/.venv-rllib (gitignored) if missing or incomplete: RLlib, the peer of issue 16's
# IMPALA case. Its own venv because ray[rllib]==2.60.0 pins gymnasium 1.2.2 (Stride and
# benchmarks/.venv-peers use 1.4). torch 2.13.0 CPU first (the wheel from disk; anything else may pull
# multi-GB CUDA builds), then ray[rllib] constrained to it. The benchmarks' evaluator
# (bench_common/evaluate.py) needs only gymnasium and numpy, both there.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="$REPO/benchmarks/.venv-rllib"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c "import ray.rllib, torch, gymnasium" 2>/dev/null; then
    exit 0
fi
echo "[setup] creating $VENV" >&2
"$PY" -m venv "$VENV"
PIP=(nice -n 5 "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" "torch==2.13.0"
CONSTRAINTS="$(mktemp)"
trap 'rm -f "$CONSTRAINTS"' EXIT
echo "torch==2.13.0" > "$CONSTRAINTS"
"${PIP[@]}" -c "$CONSTRAINTS" "ray[rllib]==2.60.0"
"$VENV/bin/python" -c "import importlib.metadata as m; print('[setup] ' + ', '.join(f'{p} {m.version(p)}' for p in ('ray', 'torch', 'gymnasium', 'numpy')))" >&2
