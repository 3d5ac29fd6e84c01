#!/usr/bin/env bash
# Create benchmarks/.venv-peers (gitignored) if it is missing or incomplete: torch 2.13.0 CPU first,
# then the peers (stable-baselines3, tianshou, gymnasium with Box2D for LunarLander, envpool, ale-py,
# minatar, mujoco, gymnasium-robotics) constrained to that torch, then rl_zoo3 without its deps (we only read its
# hyperparams/*.yml). Used by the dqn, onpolicy_sac, env_managers, learning and curves benchmarks.
# Stride itself is used from the repo through PYTHONPATH.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="$REPO/benchmarks/.venv-peers"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
# One setup at a time: benchmark runs started side by side on a fresh machine would otherwise install
# into the same virtualenv at once (the second waits here, then finds it complete).
mkdir -p "$REPO/benchmarks"
exec 9> "$REPO/benchmarks/.venv-peers.lock"
flock 9

if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c "import importlib.util as u, stable_baselines3, tianshou, gymnasium, torch, yaml, tqdm, tensorboardX, cloudpickle, psutil, Box2D, ale_py, cv2, envpool, minatar, mujoco, gymnasium_robotics; assert u.find_spec('rl_zoo3')" 2>/dev/null; then
    exit 0
fi
echo "[setup] creating $VENV" >&2
"$PY" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
# 1) torch first: the CPU wheel from disk (anything else may pull multi-GB CUDA builds).
"${PIP[@]}" "torch==2.13.0"
CONSTRAINTS="$(mktemp)"
trap 'rm -f "$CONSTRAINTS"' EXIT
echo "torch==2.13.0" > "$CONSTRAINTS"
# 2) the peers and what Stride needs from the repo (pyyaml to read rl-zoo3's yml; Box2D's wheel for
#    benchmarks/learning's LunarLander cases).
"${PIP[@]}" -c "$CONSTRAINTS" stable-baselines3 tianshou "gymnasium[box2d]" pyyaml tqdm tensorboardX cloudpickle psutil
# 2b) Atari: ale-py (Stride's preset and its vector env; the repo's pin), OpenCV for the preset's
#     resize, EnvPool (a native vector env peer; 1.2.5 has a Python 3.11 wheel).
"${PIP[@]}" -c "$CONSTRAINTS" "ale-py==0.12.1" opencv-python-headless "envpool==1.2.5"
# 2c) MinAtar (its Gymnasium ids) and MuJoCo (Gymnasium's v5 envs) for benchmarks/curves, at the versions
#     constraints.txt pins for Stride (minatar pulls matplotlib, used for the curves' plot).
"${PIP[@]}" -c "$CONSTRAINTS" "minatar==1.0.15" "mujoco==4.0.0" "gymnasium[mujoco]"
# 2d) Gymnasium-Robotics (FetchReach for benchmarks/her; the repo's pin; its other dependencies are above)
"${PIP[@]}" -c "$CONSTRAINTS" "gymnasium-robotics==1.4.2"
# 3) rl-zoo3 for its hyper-parameter files only.
"${PIP[@]}" --no-deps rl_zoo3
"$VENV/bin/python" - <<'PY'
import importlib.metadata as m
print("[setup] " + ", ".join(f"{p} {m.version(p)}" for p in ("torch", "gymnasium", "stable_baselines3", "tianshou", "rl_zoo3", "ale_py", "envpool", "gymnasium_robotics")))
PY
