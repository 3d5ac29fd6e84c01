"""PPO on CartPole-v1 on the parallel pipeline: `stride -m parallel -c <this file> -s 0`.

The serial config's algorithm (``../cartpole_ppo_config.py``, stop 475 confirmed over 100 episodes)
with its 8 envs split over two collector actors of 4 envs each. No replay: each collector's unroll
of ``n_sample`` = 256 env steps (4 envs x 64 steps) goes to the learner whole and is trained on once
(5 epochs of 128-sample minibatches), as one serial collect is; the collector then gets the new
weights. With two collectors taking turns an unroll is at most one learner version old, which
``system_config.max_staleness=1`` admits (PPO's ratio to the stored log-probs corrects for it); an
older one is dropped and counted (``stale_dropped`` in ``result.json``). ``system_config`` names
the roles and their Ray CPU shares (2 collectors x 0.5 + learner 0.5: fits a 2-core machine).

Measured 2026-11-29 on 2 cores shared with other runs (load average 4-15), seeds 0-4: the
100-episode confirmation of 475 holds at 8,192 / 8,192 / 18,176 / 3,072 / 3,072 env steps, 65 / 56 /
102 / 73 / 101 s wall in the loop (plus 22-46 s to start Ray under that load); 2 / 2 / 12 / 1 / 1
unrolls dropped as 2 versions old; the returned policies score 500.0 / 498.5 / 500.0 / 500.0 / 477.8
on 100 fresh episodes (``stride -m eval``'s seeds).
"""

from copy import deepcopy

from stride.config.config import deep_update

from stride.zoo.cartpole.config.cartpole_ppo_config import create_config as _serial_create
from stride.zoo.cartpole.config.cartpole_ppo_config import main_config as _serial_main

# the serial config's algorithm as is; only the name and the env split over the collector actors differ
main_config = deep_update(deep_update({}, deepcopy(_serial_main)), dict(
    exp_name="cartpole_ppo_parallel",
    env=dict(collector_env_num=4),  # per collector actor; n_sample (256 env steps per unroll) as serial
))

create_config = deepcopy(_serial_create)

system_config = dict(
    collector_num=2,
    learner_num=1,
    collector_cpus=0.5,
    learner_cpus=0.5,
    replay_cpus=0.0,
    max_staleness=1,
)

if __name__ == "__main__":
    from stride.entry import parallel_pipeline

    parallel_pipeline([main_config, create_config, system_config], seed=0)
