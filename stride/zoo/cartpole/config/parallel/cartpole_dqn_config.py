"""DQN on CartPole-v1 on the parallel pipeline: `stride -m parallel -c <this file> -s 0`.

The serial config's algorithm (``../cartpole_dqn_config.py``) with its 8 envs split over two
collector actors of 4 envs each; the learner takes 4 gradient steps per 8 env steps, the serial
ratio (``system_config.replay_ratio``'s default, held while collection and learning overlap). ``system_config`` names the roles and their Ray CPU shares
(2 collectors x 0.5 + learner 0.5 + replay 0: fits a 2-core machine).

Measured 2026-11-25 on 2 cores shared with two other benchmarks (load average ~6), nice 5, seeds 0-2:
the 100-episode confirmation (220-299) holds at 1,000-2,000 env steps; 23-26 s wall per run, of which
~7 s start the local Ray instance and ~6-9 s start the actors (a run is not bit-reproducible: which
collector's batch arrives first follows their speed).
"""

from copy import deepcopy

from stride.config.config import deep_update

from stride.zoo.cartpole.config.cartpole_dqn_config import create_config as _serial_create
from stride.zoo.cartpole.config.cartpole_dqn_config import main_config as _serial_main

# the serial config's algorithm as is; only the name and the env split over the collector actors differ
main_config = deep_update(deep_update({}, deepcopy(_serial_main)), dict(exp_name="cartpole_dqn_parallel", env=dict(collector_env_num=4)))  # collector_env_num: per collector actor

create_config = deepcopy(_serial_create)

system_config = dict(
    collector_num=2,
    learner_num=1,
    collector_cpus=0.5,
    learner_cpus=0.5,
    replay_cpus=0.0,
    replay_snapshot_freq=50,
)

if __name__ == "__main__":
    from stride.entry import parallel_pipeline

    parallel_pipeline([main_config, create_config, system_config], seed=0)
