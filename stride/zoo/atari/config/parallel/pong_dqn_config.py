"""DQN on Pong on the parallel pipeline: `stride -m parallel -c <this file> -s 0`.

Needs the Atari extra (``pip install -c constraints.txt -e ".[atari]"``) and Ray (``stride-rl[dist]``). The serial
config's algorithm (``../pong_dqn_config.py``: the standard preset, rl-baselines3-zoo's Atari DQN)
with its 8 envs split over two collector actors of 4 envs each; every 32-transition batch a
collector sends is followed by 8 gradient steps of 32, the serial ratio (one step per 4 env steps).

The serial run's 100,000 uniformly random warm-up steps (``random_collect_size``) are the same here
(the collectors act at random until the run has them) and the replay ratio's ``learn_start`` (the
learner is sent no step before it). The one difference from the serial run:
- replay snapshots every 2,000 batches (64,000 env steps): a full replay is ~0.8 GB of frames, so
  the cartpole configs' every 50 would write it every 1,600 env steps.
"""

from copy import deepcopy

from stride.config.config import deep_update

from stride.zoo.atari.config.pong_dqn_config import create_config as _serial_create
from stride.zoo.atari.config.pong_dqn_config import main_config as _serial_main

main_config = deep_update(deep_update({}, deepcopy(_serial_main)), dict(
    exp_name="pong_dqn_parallel",
    env=dict(collector_env_num=4),  # per collector actor
))

create_config = deepcopy(_serial_create)

system_config = dict(
    collector_num=2,
    learner_num=1,
    collector_cpus=0.5,
    learner_cpus=0.5,
    replay_cpus=0.0,
    replay_snapshot_freq=2000,
)

if __name__ == "__main__":
    from stride.entry import parallel_pipeline

    parallel_pipeline([main_config, create_config, system_config], seed=0)
