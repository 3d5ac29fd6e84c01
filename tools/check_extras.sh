#!/usr/bin/env bash
# Every extra alone, as the docs install it: tools/check_extra.sh for each, then its documented
# command (the docs' install blocks: docs/install.md, the pipeline pages) at a tiny budget. `core` is
# the base install with no extra (install.md's first block). CI runs all of them, beside the tests
# (.ci/run). Prints one line per extra and exits 1 if any failed.
#
#   tools/check_extras.sh                 # every extra below
#   tools/check_extras.sh atari minari    # some
#
# It works on a snapshot of the checkout (its tracked and untracked, not ignored, files) in a
# temporary folder: pip's editable build writes stride_rl.egg-info into the tree it installs, and the
# tests may run in the checkout meanwhile. The core install is made once, and each extra's fresh
# virtualenv layers on it (STRIDE_CORE_VENV), so torch is installed once, not once per extra.
# tests/docs/test_code_blocks.py checks that every extra a docs block installs is here, with the
# `stride` commands its docs line runs.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
zoo='$(python -c "import os, stride.zoo as z; print(os.path.dirname(z.__file__))")'
declare -A CMD=(
  [core]="stride -m serial -e cartpole -p dqn -s 0 --env-step 300 --no-progress"
  [box2d]="stride -m serial -e lunarlander -p ppo -s 0 --env-step 2000 --no-progress"
  [atari]="stride -m serial -e pong -p dqn -s 0 --env-step 300 --no-progress"
  [minatar]="stride -m serial -e minatar_breakout -p dqn -s 0 --env-step 300 --no-progress"
  [mujoco]="stride -m serial -e hopper -p sac -s 0 --env-step 300 --no-progress"
  [minigrid]="stride -m serial -e doorkey -p ppo -s 0 --env-step 1000 --no-progress && stride -m serial -e doorkey -p ppo_rnd -s 0 --env-step 1000 --no-progress"
  [multiagent]="stride -m serial -e tictactoe -p dqn -s 0 --env-step 500 --no-progress"
  [robotics]="stride -m serial -e fetchreach -p sac_her -s 0 --env-step 300 --no-progress"
  [minari]="stride -m serial -e cartpole -p ppo -s 0 --env-step 2000 --no-progress && stride -m collect_demo -e cartpole -p ppo --ckpt cartpole_ppo_seed0 --episodes 2 --out cartpole_expert_demo && stride -m serial -e cartpole -p dqn_gail -s 0 --set reward_model.data_path=cartpole_expert_demo --env-step 500 --no-progress"
  [video]="stride -m serial -e cartpole -p dqn -s 0 --env-step 300 --no-progress && stride -m eval --load cartpole_dqn_seed0 --episodes 1 --replay-path videos && ls videos/env0/*.mp4"
  [tune]="stride -m tune -e cartpole -p dqn --trials 2 --env-step 400 -s 0"
  [league]="zoo=$zoo && stride -m league -c \$zoo/pettingzoo/config/tictactoe_league_config.py -s 0 --env-step 1000 --no-progress && stride -m league -c \$zoo/pettingzoo/config/connect_four_league_config.py -s 0 --env-step 1000 --no-progress"
  [plot]="stride -m serial -e cartpole -p dqn -s 0 --env-step 1000 --no-progress && stride plot cartpole_dqn_seed0 --out curves.png && test -s curves.png"
  [dist]="zoo=$zoo && stride -m parallel -c \$zoo/cartpole/config/parallel/cartpole_dqn_config.py -s 0 --env-step 1000 --no-progress"
)
ORDER=(core box2d atari minatar mujoco minigrid multiagent robotics minari video tune league plot dist)
extras=("$@")
[ "${#extras[@]}" -eq 0 ] && extras=("${ORDER[@]}")
for extra in "${extras[@]}"; do
  if [ -z "${CMD[$extra]+set}" ]; then
    echo "check_extras: unknown extra '$extra'; valid choices: ${ORDER[*]}" >&2
    exit 2
  fi
done
work="$(mktemp -d "${TMPDIR:-/tmp}/stride-extras-XXXXXX")"
trap 'rm -rf -- "$work"' EXIT
trap 'exit 143' TERM INT  # the EXIT trap cleans up when CI stops it
start=$SECONDS
mkdir "$work/src"
if git -C "$root" rev-parse --git-dir > /dev/null 2>&1; then
  (cd "$root" && git ls-files -z --cached --others --exclude-standard \
     | tar --null --files-from=- --ignore-failed-read -cf - 2> /dev/null) | tar -xf - -C "$work/src"
else
  cp -a "$root/." "$work/src"
fi
if [ -z "${STRIDE_CORE_VENV:-}" ]; then
  if ! { "${PYTHON:-python3}" -m venv "$work/core" \
         && "$work/core/bin/pip" install -q --no-compile -c "$work/src/constraints.txt" -e "$work/src"; }; then
    echo "check_extras: the core install (pip install -c constraints.txt -e .) failed" >&2
    exit 1
  fi
  export STRIDE_CORE_VENV="$work/core"
fi
echo "check_extras: snapshot and core install in $((SECONDS - start)) s"
failed=0
summary=()
TIMEFORMAT='%0U + %0S'
for extra in "${extras[@]}"; do
  start=$SECONDS
  # bash's time: the CPU seconds of the install and the command (its report to a file, the
  # command's own stderr where it was)
  if { time "$work/src/tools/check_extra.sh" "$extra" bash -c "set -e; ${CMD[$extra]}" 2>&3; } 3>&2 2> "$work/cpu"; then
    summary+=("[$extra] ok in $((SECONDS - start)) s, CPU $(cat "$work/cpu") s")
  else
    summary+=("[$extra] FAILED after $((SECONDS - start)) s")
    failed=1
  fi
done
printf 'check_extras: %s\n' "${summary[@]}"
exit "$failed"
