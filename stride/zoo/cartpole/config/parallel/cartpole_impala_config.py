"""IMPALA on CartPole-v1 on the parallel pipeline: `stride -m parallel -c <this file> -s 0`.

The serial config's algorithm (``../cartpole_impala_config.py``, DI-engine's CartPole IMPALA
settings, stop 475) with its 8 envs split over two collector actors of 4 envs each, as IMPALA was
made to run: actors unroll with the weights they last received, the learner corrects for their lag
with v-trace (the ``log_prob`` each collector recorded is the behaviour policy's). The learner takes
2 gradient steps of 16 unrolls per 8 unrolls collected, the serial ratio (16 unrolls, 4 steps),
held by ``system_config.replay_ratio``'s default while collection and learning overlap. ``system_config`` names the roles and their Ray CPU shares (2 collectors x 0.5 +
learner 0.5 + replay 0: fits a 2-core machine).
"""

from copy import deepcopy

from stride.config.config import deep_update

from stride.zoo.cartpole.config.cartpole_impala_config import create_config as _serial_create
from stride.zoo.cartpole.config.cartpole_impala_config import main_config as _serial_main

# the serial config's algorithm as is; the name, the env split over the collector actors and the
# per-batch share of the serial update ratio (16 unrolls -> 4 steps becomes 8 unrolls -> 2 steps) differ
main_config = deep_update(deep_update({}, deepcopy(_serial_main)), dict(
    exp_name="cartpole_impala_parallel",
    env=dict(collector_env_num=4),  # per collector actor
    policy=dict(collect=dict(n_sample=8), learn=dict(update_per_collect=2)),
))

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
