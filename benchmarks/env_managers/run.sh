#!/usr/bin/env bash
# Env-manager throughput benchmark: Stride's managers vs a bare loop, Gymnasium, SB3 and Tianshou.
#   bash benchmarks/env_managers/run.sh [--cases cartpole image burn breakout] [--seconds 1.0] [--repeats 3]
# Uses benchmarks/.venv-peers (gitignored), created or completed by bench_common/setup_peers.sh;
# Stride is imported from this checkout through PYTHONPATH, not installed there.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
bash "$REPO/benchmarks/bench_common/setup_peers.sh"
"$REPO/benchmarks/.venv-peers/bin/python" - <<'PY' >&2
import importlib.metadata as m
print("[setup] " + ", ".join(f"{p} {m.version(p)}" for p in ("torch", "gymnasium", "numpy", "stable_baselines3", "tianshou", "ale_py", "envpool")))
PY
cd "$REPO"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
uptime
exec "$REPO/benchmarks/.venv-peers/bin/python" "$HERE/bench.py" "$@"
