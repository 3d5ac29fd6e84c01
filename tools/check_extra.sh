#!/usr/bin/env bash
# Check that one extra alone runs a command: a fresh virtualenv in a temporary folder with only
# `stride-rl[EXTRA]` (EXTRA `core`: the base install, no extra), installed as the docs do
# (`pip install -c constraints.txt -e '.[EXTRA]'`), then COMMAND run in a fresh temporary folder
# with that virtualenv's bin/ first on PATH.
#
#   tools/check_extra.sh EXTRA COMMAND [ARGS...]
#   tools/check_extra.sh minatar stride -m serial -e minatar_breakout -p dqn -s 0 --env-step 300
#
# The test extra brings packages other extras rely on without saying so (grpcio came with
# tensorboard and hid that stride-rl[dist]'s Ray could not start), so CI's own virtualenv cannot
# show that an extra is complete; this can. Afterwards the virtualenv and the folder COMMAND ran in
# (its experiment folders) are removed. Exit code: COMMAND's (1 when the install fails).
#
# STRIDE_CORE_VENV=DIR (tools/check_extras.sh sets it): DIR is a virtualenv holding the core install
# alone (`pip install -c constraints.txt -e .`); the fresh virtualenv sees DIR's packages through a
# .pth line, and pip installs only what the extra adds (~15 s instead of ~60 s with torch). It still
# shows a missing dependency: DIR holds nothing an extra brings.
set -euo pipefail
if [ "$#" -lt 2 ]; then
    echo "usage: tools/check_extra.sh EXTRA COMMAND [ARGS...]" >&2
    exit 2
fi
extra="$1"
shift
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
spec="$root[$extra]"
[ "$extra" = core ] && spec="$root"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/stride-extra-XXXXXX")"
trap 'rm -rf -- "$tmp"' EXIT
trap 'exit 143' TERM INT
start=$SECONDS
"$python" -m venv "$tmp/venv"
if [ -n "${STRIDE_CORE_VENV:-}" ]; then
    purelib='import sysconfig; print(sysconfig.get_paths()["purelib"])'
    "$STRIDE_CORE_VENV/bin/python" -c "$purelib" > "$("$tmp/venv/bin/python" -c "$purelib")/stride_core_venv.pth"
fi
if ! "$tmp/venv/bin/pip" install -q --no-compile -c "$root/constraints.txt" -e "$spec"; then
    echo "check_extra: installing stride-rl[$extra] failed" >&2
    exit 1
fi
installed=$SECONDS
echo "check_extra: stride-rl[$extra] installed alone in $((installed - start)) s; running: $*"
mkdir "$tmp/run"
set +e
(cd "$tmp/run" && PATH="$tmp/venv/bin:$PATH" VIRTUAL_ENV="$tmp/venv" PYTHONPATH= "$@")
rc=$?
set -e
echo "check_extra: [$extra] command exited $rc after $((SECONDS - installed)) s (install + run: $((SECONDS - start)) s)"
exit "$rc"
