#!/usr/bin/env bash
# Create benchmarks/.venv-buffers (gitignored) if it is missing: torch 2.13.0 CPU wheel FIRST (from
# the local wheel cache; anything else may pull multi-GB CUDA builds), then the peers with a
# constraints file pinning that torch. torchrl/tensordict are optional: if pip cannot install them
# next to torch 2.13.0 the benchmark skips TorchRL and says so. Stride comes from the checkout
# through PYTHONPATH (only numpy + torch are needed for its buffers).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="$REPO/benchmarks/.venv-buffers"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
LOG="$VENV/setup.log"

if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c "import torch, tianshou, stable_baselines3, gymnasium" 2>/dev/null; then
    exit 0
fi
set -e
echo "[setup] creating $VENV (log: $LOG)" >&2
"$PY" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check)
CONSTRAINTS="$(mktemp)"
trap 'rm -f "$CONSTRAINTS"' EXIT
echo "torch==2.13.0" > "$CONSTRAINTS"
# 1) torch first
"${PIP[@]}" "torch==2.13.0" >>"$LOG" 2>&1
# 2) peers that must install
"${PIP[@]}" -c "$CONSTRAINTS" tianshou stable-baselines3 gymnasium >>"$LOG" 2>&1
# 3) torchrl + tensordict: optional
set +e
if "${PIP[@]}" -c "$CONSTRAINTS" torchrl tensordict >>"$LOG" 2>&1; then
    echo "[setup] torchrl installed" >&2
else
    echo "[setup] torchrl/tensordict could NOT be installed next to torch==2.13.0 (see $LOG); TorchRL is skipped" >&2
fi
"$VENV/bin/python" - <<'PY'
import importlib.metadata as m
out = []
for p in ("torch", "numpy", "tianshou", "torchrl", "tensordict", "stable_baselines3", "gymnasium"):
    try:
        out.append(f"{p} {m.version(p)}")
    except m.PackageNotFoundError:
        out.append(f"{p} (missing)")
print("[setup] " + ", ".join(out))
PY
