#!/usr/bin/env bash
# Create benchmarks/.venv-imitation (gitignored) if missing or incomplete: `imitation` (HumanCompatibleAI),
# the peer of issue 17's GAIL benchmark. Its own venv because imitation==1.0.1 pins gymnasium~=0.29 and
# stable-baselines3~=2.2 (Stride and benchmarks/.venv-peers use gymnasium 1.4 and SB3 2.9): installing it
# into .venv-peers would downgrade both. torch 2.13.0 CPU first (the wheel from disk; anything else may
# pull multi-GB CUDA builds), then imitation constrained to it, with numpy kept at 1.26 (gymnasium 0.29
# predates numpy 2). h5py is not needed: the demonstrations reach this venv as an .npz
# (benchmarks/gail/export_demo.py, run with Stride).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="$REPO/benchmarks/.venv-imitation"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c "import imitation.algorithms.adversarial.gail, stable_baselines3, torch, gymnasium" 2>/dev/null; then
    exit 0
fi
echo "[setup] creating $VENV" >&2
"$PY" -m venv "$VENV"
PIP=(nice -n 5 "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
"${PIP[@]}" "torch==2.13.0"
CONSTRAINTS="$(mktemp)"
trap 'rm -f "$CONSTRAINTS"' EXIT
printf 'torch==2.13.0\nnumpy==1.26.4\n' > "$CONSTRAINTS"
# what pip resolved on 2026-11-26: gymnasium 0.29.1, stable-baselines3 2.2.1, seals 0.2.1, datasets 5.0.1
"${PIP[@]}" -c "$CONSTRAINTS" "imitation==1.0.1" "gymnasium==0.29.1" "stable-baselines3==2.2.1" "numpy==1.26.4"
"$VENV/bin/python" -c "import importlib.metadata as m; print('[setup] ' + ', '.join(f'{p} {m.version(p)}' for p in ('imitation', 'torch', 'gymnasium', 'stable_baselines3', 'numpy')))" >&2
