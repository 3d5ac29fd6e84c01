#!/usr/bin/env bash
# Every extra alone: tools/check_extra.sh for each, its documented command (docs/install.md and the
# pipeline pages) at a tiny budget. CI runs none (each check installs torch into a fresh
# virtualenv: ~1 min on 2 cores, ~15 min for all); run this before a release or after an extra or
# its pins change. Prints one line per extra and exits 1 if any failed.
#
#   tools/check_extras.sh                 # every extra below
#   tools/check_extras.sh atari minari    # some
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
zoo=stride/zoo
declare -A CMD=(
  [box2d]="stride -m serial -e lunarlander -p ppo -s 0 --env-step 2000 --no-progress"
  [atari]="stride -m serial -e pong -p dqn -s 0 --env-step 300 --no-progress"
  [minatar]="stride -m serial -e minatar_breakout -p dqn -s 0 --env-step 300 --no-progress"
  [mujoco]="stride -m serial -e hopper -p sac -s 0 --env-step 300 --no-progress"
  [minigrid]="stride -m serial -e doorkey -p ppo -s 0 --env-step 1000 --no-progress"
  [multiagent]="stride -m serial -e tictactoe -p dqn -s 0 --env-step 500 --no-progress"
  [robotics]="stride -m serial -e fetchreach -p sac_her -s 0 --env-step 300 --no-progress"
  [minari]="stride -m serial -e cartpole -p ppo -s 0 --env-step 2000 --no-progress && stride -m collect_demo -e cartpole -p ppo --ckpt cartpole_ppo_seed0 --episodes 2 --out cartpole_expert_demo && stride -m serial -e cartpole -p dqn_gail -s 0 --set reward_model.data_path=cartpole_expert_demo --env-step 500 --no-progress"
  [video]="stride -m serial -e cartpole -p dqn -s 0 --env-step 300 --no-progress && stride -m eval --load cartpole_dqn_seed0 --episodes 1 --replay-path videos && ls videos/env0/*.mp4"
  [tune]="stride -m tune -e cartpole -p dqn --trials 2 --env-step 400 -s 0"
  [league]="stride -m league -c $zoo/pettingzoo/config/tictactoe_league_config.py -s 0 --env-step 1000 --no-progress"
  [plot]="stride -m serial -e cartpole -p dqn -s 0 --env-step 1000 --no-progress && stride plot cartpole_dqn_seed0 --out curves.png && test -s curves.png"
  [dist]="stride -m parallel -c $zoo/cartpole/config/parallel/cartpole_dqn_config.py -s 0 --env-step 1000 --no-progress"
)
ORDER=(box2d atari minatar mujoco minigrid multiagent robotics minari video tune league plot dist)
extras=("$@")
[ "${#extras[@]}" -eq 0 ] && extras=("${ORDER[@]}")
failed=0
summary=()
for extra in "${extras[@]}"; do
  if [ -z "${CMD[$extra]+set}" ]; then
    echo "check_extras: unknown extra '$extra'; valid choices: ${ORDER[*]}" >&2
    exit 2
  fi
  start=$SECONDS
  if tools/check_extra.sh "$extra" bash -c "set -e; ${CMD[$extra]}"; then
    summary+=("[$extra] ok in $((SECONDS - start)) s")
  else
    summary+=("[$extra] FAILED after $((SECONDS - start)) s")
    failed=1
  fi
done
printf 'check_extras: %s\n' "${summary[@]}"
exit "$failed"
