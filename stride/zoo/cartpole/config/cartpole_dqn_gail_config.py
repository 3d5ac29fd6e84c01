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

main_config = dict(
    exp_name="cartpole_dqn_gail",
    env=dict(
        env_id="CartPole-v1",
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=10,
        stop_value=450,
    ),
    policy=dict(
        model=dict(obs_shape=4, action_shape=2, encoder_hidden_size_list=[128, 128], dueling=False, head_layer_num=0),
        discount_factor=0.97,
        nstep=1,
        learn=dict(
            update_per_collect=4,
            batch_size=64,
            learning_rate=3e-3,
            target_update_freq=25,
            learner=dict(hook=dict(save_ckpt_after_iter=1000)),
        ),
        collect=dict(n_sample=8),
        eval=dict(evaluator=dict(eval_freq_envstep=1000, confirm_episode=100)),
        other=dict(
            eps=dict(type="exp", start=0.95, end=0.1, decay=10000),
            replay_buffer=dict(replay_buffer_size=20000),
        ),
    ),
    reward_model=dict(
        data_path="cartpole_expert_demo",
        input="obs_action",
        hidden_size_list=[64, 64],
        learning_rate=1e-3,
        batch_size=64,
        update_per_collect=1,
        reward_type="positive",
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
    replay_buffer=dict(type="naive"),
    reward_model=dict(type="gail"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_reward_model

    serial_pipeline_reward_model([main_config, create_config], seed=0)
