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
# Same allocator conditions for every contestant: without these, glibc serves each large sampled
# batch (uint8[64,4,84,84] = 1.8 MB) from a fresh mmap and the page faults dominate -- or not,
# depending on what the process freed before (it moved the bare ring's sample64 by 10x between
# processes). A high mmap threshold and no trimming keep freed batches in the heap for reuse.
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-33554432}"
export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-4294967296}"
export MALLOC_TOP_PAD_="${MALLOC_TOP_PAD_:-268435456}"
exec "$REPO/benchmarks/.venv-buffers/bin/python" "$HERE/bench.py" "$@"
