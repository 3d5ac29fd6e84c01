"""GAIL with a DQN learner on CartPole-v1: `stride -m serial -e cartpole -p dqn_gail -s 0` (or `-c` this file).

The learner never sees the env's reward: the ``gail`` reward model's discriminator (expert vs
agent (obs, action)) gives every transition's reward. The expert's demonstrations come first:

    stride -m serial -e cartpole -p ppo -s 0                                  # the expert (500)
    stride -m collect_demo -e cartpole -p ppo --ckpt cartpole_ppo_seed0 --episodes 10 --out cartpole_expert_demo
    stride -m serial -e cartpole -p dqn_gail -s 0

``reward_model.data_path`` names that dataset (relative to the working folder; ``--set
reward_model.data_path=DIR`` for another). The stop value, 450, is 90 % of the expert's 500, confirmed
over 100 episodes. The DQN part is ``cartpole_dqn_config``'s. Measured (benchmarks/gail/README.md): seeds
0-2 confirm at 1,000-6,000 env steps (0.7-4.2 train CPU s), with this reward and with ``reward_type='logit'``.
"""

from copy import deepcopy

from stride.config.config import deep_update
from stride.zoo.cartpole.config.cartpole_dqn_config import create_config as _base_create
from stride.zoo.cartpole.config.cartpole_dqn_config import main_config as _base_main

# cartpole_dqn's DQN as is; the stop value (90 % of the expert) and the GAIL reward model added
main_config = deep_update(deep_update({}, deepcopy(_base_main)), dict(
    exp_name="cartpole_dqn_gail",
    env=dict(stop_value=450),
    reward_model=dict(
        data_path="cartpole_expert_demo",
        input="obs_action",
        hidden_size_list=[64, 64],
        learning_rate=1e-3,
        batch_size=64,
        update_per_collect=1,
        reward_type="positive",
    ),
))

create_config = deep_update(deep_update({}, deepcopy(_base_create)), dict(reward_model=dict(type="gail")))

if __name__ == "__main__":
    from stride.entry import serial_pipeline_reward_model

    serial_pipeline_reward_model([main_config, create_config], seed=0)
