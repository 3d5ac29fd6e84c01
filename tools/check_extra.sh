#!/usr/bin/env bash
# Check that one extra alone runs a command: a fresh virtualenv in a temporary folder with only
# `stride-rl[EXTRA]` (installed as the README does, with the constraints.txt pins), then COMMAND
# run from the repository root with that virtualenv's bin/ first on PATH.
#
#   tools/check_extra.sh EXTRA COMMAND [ARGS...]
#   tools/check_extra.sh dist stride -m parallel -c stride/zoo/cartpole/config/parallel/cartpole_dqn_config.py -s 0 --env-step 1000
#
# The test extra brings packages other extras rely on without saying so (grpcio came with
# tensorboard and hid that stride-rl[dist]'s Ray could not start), so CI's own virtualenv cannot
# show that an extra is complete; this can. Afterwards the virtualenv and whatever COMMAND created
# in the repository root (its experiment folders) are removed. Exit code: COMMAND's (1 when the
# install fails).
set -euo pipefail
if [ "$#" -lt 2 ]; then
    echo "usage: tools/check_extra.sh EXTRA COMMAND [ARGS...]" >&2
    exit 2
fi
extra="$1"
shift
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/stride-extra-XXXXXX")"
before="$tmp/before.txt"
(cd "$root" && ls -A) > "$before"
cleanup() {
    # what COMMAND left in the repository root (never what was there before it ran)
    (cd "$root" && ls -A) | comm -13 "$before" - | while IFS= read -r name; do
        rm -rf -- "${root:?}/$name"
    done
    rm -rf -- "$tmp"
}
trap cleanup EXIT
start=$SECONDS
"$python" -m venv "$tmp/venv"
if ! "$tmp/venv/bin/pip" install -q --no-compile -c "$root/constraints.txt" -e "$root[$extra]"; then
    echo "check_extra: installing stride-rl[$extra] failed" >&2
    exit 1
fi
installed=$SECONDS
echo "check_extra: stride-rl[$extra] installed alone in $((installed - start)) s; running: $*"
set +e
(cd "$root" && PATH="$tmp/venv/bin:$PATH" VIRTUAL_ENV="$tmp/venv" PYTHONPATH= "$@")
rc=$?
set -e
echo "check_extra: [$extra] command exited $rc after $((SECONDS - installed)) s (install + run: $((SECONDS - start)) s)"
exit "$rc"
