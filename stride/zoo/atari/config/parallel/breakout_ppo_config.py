"""PPO on Breakout on the parallel pipeline: `stride -m parallel -c <this file> -s 0`.

Needs the Atari extra (``pip install -c constraints.txt -e ".[atari]"``) and Ray (``stride-rl[dist]``). The serial
config's algorithm (``../breakout_ppo_config.py``: the standard preset, rl-baselines3-zoo's Atari
PPO, 8 envs x 128 steps per update) with its envs split over two collector actors of 4 envs each.
No replay: each collector's unroll of ``n_sample`` = 1,024 env steps (4 envs x 256 steps) is trained
on once (4 epochs of 256-sample minibatches), as one serial collect is; the collector then gets the
new weights. With two collectors taking turns an unroll is at most one learner version old
(``system_config.max_staleness=1``); an older one is dropped and counted (``stale_dropped``).
"""

from copy import deepcopy

from stride.config.config import deep_update

from stride.zoo.atari.config.breakout_ppo_config import create_config as _serial_create
from stride.zoo.atari.config.breakout_ppo_config import main_config as _serial_main

main_config = deep_update(deep_update({}, deepcopy(_serial_main)), dict(
    exp_name="breakout_ppo_parallel",
    env=dict(collector_env_num=4),  # per collector actor; n_sample (1,024 env steps per unroll) as serial
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
