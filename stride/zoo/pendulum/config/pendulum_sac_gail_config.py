"""GAIL with a SAC learner on Pendulum-v1 (continuous actions): `stride -m serial -e pendulum -p sac_gail -s 0`.

The learner never sees the env's reward: the ``gail`` reward model's discriminator (expert vs agent
(obs, torque)) gives every transition's reward. SAC's replay holds torques in [-1, 1] (its tanh
range), the dataset in the env's [-2, 2]: ``agent_actions='unit_range'`` puts both in [-1, 1]. The
expert's demonstrations come first:

    stride -m serial -e pendulum -p sac -s 0
    stride -m collect_demo -e pendulum -p sac --ckpt pendulum_sac_seed0 --episodes 20 --out pendulum_expert_demo
    stride -m serial -e pendulum -p sac_gail -s 0

Pendulum's returns are negative (0 is best), so "90 % of the expert" is read on the span from a
random policy (about -1,200) to the expert; the stop value is the SAC config's -250. The SAC part is
``pendulum_sac_config``'s. Measured (benchmarks/gail/README.md): seeds 0-2 confirm -250 at 3,000-4,000 env
steps; fresh 100-episode means -236.8 / -179.4 / -212.9 against the expert's -165.1 (random: -1,166).
"""

from copy import deepcopy

from stride.config.config import deep_update
from stride.zoo.pendulum.config.pendulum_sac_config import create_config as _base_create
from stride.zoo.pendulum.config.pendulum_sac_config import main_config as _base_main

# pendulum_sac's SAC as is; the GAIL reward model added (agent actions in SAC's [-1, 1])
main_config = deep_update(deep_update({}, deepcopy(_base_main)), dict(
    exp_name="pendulum_sac_gail",
    reward_model=dict(
        data_path="pendulum_expert_demo",
        input="obs_action",
        agent_actions="unit_range",
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
