#!/usr/bin/env bash
# Issue 29's GPU figures in one command, on a machine with a CUDA GPU and ~16 cores (the project's
# device machine: one H200). Every step is bounded, so the whole fits a short lease:
#
#   bash benchmarks/parallel/gpu.sh OUT_DIR [BUDGET_S]        # default budget 560 s: one run call (600 s)
#
# Runs, in order of what the issue asks (each step's output in OUT_DIR/<step>.txt, the GPU's own
# utilisation once a second in OUT_DIR/dmon.txt):
#   1. facts: GPU, driver, torch / Ray / Gymnasium / ALE versions, cores;
#   2. learner_step: one Pong DQN learner step on the GPU, timed and taken apart
#      (benchmarks/learner_step/step_profile.py --cuda): updates/s the learner alone sustains;
#      graph: the same update outside the framework, eager and captured in a CUDA graph (the ceiling);
#   3. pong: overlap.py --cases pong --cuda, 8 envs as 8 collectors of 1, 30k env
#      steps timed after the warm-up of 1,000, replay ratio 1/4 (target >= 2,500 env steps/s);
#   4. impala: overlap.py --cases impala --cuda, the zoo's Breakout IMPALA with 12 collectors of 8
#      envs, 100k env steps timed (target >= 6,000 env steps/s);
#   5. tests: the CUDA tests CI skips (tests/entry/test_cuda.py and the others marked for a GPU).
# STEPS="graph pong_run tests" runs those steps only (pong_run: the Pong whole run alone; graph: the
# learner step eager and in a CUDA graph, benchmarks/learner_step/graph_ceiling.py).
# PYTHON (default python3) must have Stride's dependencies and the [dist] and [atari] extras; on a
# machine that has none of them, WHEELS=<folder of wheels> installs them first into a temporary folder.
set -u
OUT=${1:?usage: gpu.sh OUT_DIR [BUDGET_S]}
BUDGET=${2:-560}
PY=${PYTHON:-python3}
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [[ -n "${WHEELS:-}" ]]; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/stride-site \
    "$WHEELS"/*.whl || { echo "gpu.sh: installing the wheels of $WHEELS failed"; exit 1; }
  export PYTHONPATH="/tmp/stride-site${PYTHONPATH:+:$PYTHONPATH}" PATH="/tmp/stride-site/bin:$PATH"
fi
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
EXP=$(mktemp -d /tmp/stride-gpu-exp.XXXXXX)  # the runs' folders (checkpoints, replay snapshots): not OUT_DIR

left() { echo $(( BUDGET - SECONDS )); }
step() {  # step NAME CAP_S COMMAND...: run with a timeout of min(CAP_S, what is left - 5 s), output teed
  local name=$1 cap=$2; shift 2
  local t=$(( $(left) - 5 )); (( t > cap )) && t=$cap
  if (( t < 20 )); then echo "== $name: skipped, $(left) s of the budget left" | tee "$OUT/$name.txt"; return; fi
  echo "== $name ($(date -u +%T), up to $t s): $*" | tee "$OUT/$name.txt"
  timeout -k 10 "$t" "$@" 2>&1 | tee -a "$OUT/$name.txt"
  echo "== $name: exit ${PIPESTATUS[0]} after $SECONDS s of the run" | tee -a "$OUT/$name.txt"
}

nvidia-smi dmon -s u -o T -d 1 > "$OUT/dmon.txt" 2>&1 &
DMON=$!
trap 'kill $DMON 2>/dev/null' EXIT

want() { [[ " ${STEPS:-facts learner_step graph pong impala tests} " == *" $1 "* ]]; }
want facts && step facts 60 bash -c "nvidia-smi -L; nproc; free -g | head -2; df -h /dev/shm | tail -1; \"$PY\" -c '
import torch, ray, gymnasium, ale_py, numpy
print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, torch.cuda.is_available(), torch.cuda.get_device_name(0))
print(\"ray\", ray.__version__, \"gymnasium\", gymnasium.__version__, \"ale_py\", ale_py.__version__, \"numpy\", numpy.__version__)'"
want learner_step && step learner_step 90 "$PY" benchmarks/learner_step/step_profile.py --cuda --fill 100000 --steps 3000
want graph && step graph 60 "$PY" benchmarks/learner_step/graph_ceiling.py --steps 3000
# the stages and the whole run (~230 s on the H200 on 2026-11-29: a 200 s cap stopped it after the stages);
# the run as 4 collectors of 2 is pong_run's (PONG_RUN_COLLECTORS=4), so the default fits one device call
want pong && step pong 260 "$PY" benchmarks/parallel/overlap.py --cases pong --cuda --collectors 8 --env-steps 30000 \
  --learn-steps-pong 3000 --out "$EXP"
# the whole run alone (overlap.py's phase 3, printed as one RESULT line): when the stages were measured before
for n in ${PONG_RUN_COLLECTORS:-8}; do  # PONG_RUN_COLLECTORS="8 4": one whole run per collector count
  want pong_run && step "pong_run_x$n" 150 "$PY" benchmarks/parallel/overlap.py --child --case pong --phase run \
    --cuda --collectors "$n" --env-steps 30000 --out "$EXP"
done
want impala && step impala 170 "$PY" benchmarks/parallel/overlap.py --cases impala --cuda --collectors 12 --env-steps 100000 \
  --learn-steps-impala 300 --out "$EXP"
want tests && step tests 200 "$PY" -m pytest -q -p no:cacheprovider -o addopts="" --timeout 180 tests/entry/test_cuda.py \
  tests/torch_utils/test_data_helper.py tests/policy/test_dqn_policy.py -k "cuda or gpu or nccl" --deselect \
  "tests/entry/test_cuda.py::test_trains_on_the_gpu_and_its_checkpoint_evaluates_and_resumes[doorkey-ppo_rnd]"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >> "$OUT/facts.txt" 2>&1
echo "gpu.sh: done in $SECONDS s"
