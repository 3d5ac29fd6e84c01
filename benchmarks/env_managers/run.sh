#!/usr/bin/env bash
# Env-manager throughput benchmark: Stride's managers vs a bare loop, Gymnasium, SB3 and Tianshou.
#   bash benchmarks/env_managers/run.sh [--cases cartpole image burn] [--seconds 1.0] [--repeats 3]
# Uses benchmarks/.venv-peers (gitignored; created here if missing): torch 2.13.0 (CPU) is
# installed first and pinned by a constraints file so that no peer can pull a CUDA build; then the
# peers. Stride is imported from this checkout through PYTHONPATH, not installed there.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="$REPO/benchmarks/.venv-peers"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3

if [[ ! -x "$VENV/bin/python" ]]; then
    echo "[setup] creating $VENV" >&2
    "$PY" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
    "${PIP[@]}" "torch==2.13.0"
fi
if ! "$VENV/bin/python" -c "import stable_baselines3, tianshou, gymnasium, cloudpickle, psutil" 2>/dev/null; then
    CONSTRAINTS="$(mktemp)"
    trap 'rm -f "$CONSTRAINTS"' EXIT
    echo "torch==2.13.0" > "$CONSTRAINTS"
    echo "[setup] installing the peers into $VENV" >&2
    "${PIP[@]}" -c "$CONSTRAINTS" stable-baselines3 tianshou gymnasium cloudpickle psutil
fi
"$VENV/bin/python" - <<'PY' >&2
import importlib.metadata as m
print("[setup] " + ", ".join(f"{p} {m.version(p)}" for p in ("torch", "gymnasium", "numpy", "stable_baselines3", "tianshou")))
PY
cd "$REPO"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
uptime
exec "$VENV/bin/python" "$HERE/bench.py" "$@"
