"""PPO + RND on MinAtar Breakout: `stride -m serial -e minatar_breakout -p ppo_rnd -s 0 --env-step 2000000`.

Needs the MinAtar extra: ``pip install -c constraints.txt -e ".[minatar]"``. ``minatar_breakout_ppo``'s PPO
(imported, so the two differ only by RND) with RND's bonus
(``stride.reward_model.rnd``) as its own column, learnt by a second value head as a non-episodic
return; advantages weighted 2 (extrinsic) : 1 (intrinsic), the paper's. The RND networks read the
(4, 10, 10) uint8 planes through the MinAtar conv encoder (conv 16 3x3 + FC 128), the observations
normalised per plane cell and clipped to +-5, the bonus divided by the running std of the
non-episodic intrinsic return (gamma_I 0.99), predictor lr 1e-4 and 4 epochs per collect (Burda
et al., 2019). Breakout's reward is dense, so RND is not expected to beat PPO here: this config is
the image-observation path of RND (conv encoder, uint8 observations); its learning is not measured
yet (DoorKey-8x8 is RND's measured case: ``benchmarks/rnd/``).
"""

from copy import deepcopy

from stride.config.config import deep_update
from stride.zoo.minatar.config.minatar_breakout_ppo_config import create_config as _ppo_create
from stride.zoo.minatar.config.minatar_breakout_ppo_config import main_config as _ppo_main

main_config = deep_update(deep_update({}, deepcopy(_ppo_main)), dict(
    exp_name="minatar_breakout_ppo_rnd",
    policy=dict(
        model=dict(critic_head_num=2),
        intrinsic_reward_key="intrinsic_reward",
        intrinsic_discount_factor=0.99,
        extrinsic_adv_weight=2.0,
        intrinsic_adv_weight=1.0,
    ),
    reward_model=dict(
        obs_shape=[4, 10, 10],
        learning_rate=1e-4,
        batch_size=256,
        epoch_per_collect=4,
        obs_norm_clip=5.0,
        intrinsic_discount_factor=0.99,
        reward_key="intrinsic_reward",
    ),
))

create_config = deep_update(deep_update({}, deepcopy(_ppo_create)), dict(reward_model=dict(type="rnd")))

if __name__ == "__main__":
    from stride.entry import serial_pipeline_reward_model_onpolicy

    serial_pipeline_reward_model_onpolicy([main_config, create_config], seed=0, max_env_step=2_000_000)
