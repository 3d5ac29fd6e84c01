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

main_config = dict(
    exp_name="pendulum_sac_gail",
    env=dict(
        env_id="Pendulum-v1",
        collector_env_num=4,
        evaluator_env_num=10,
        n_evaluator_episode=10,
        stop_value=-250,
    ),
    policy=dict(
        random_collect_size=800,
        model=dict(obs_shape=3, action_shape=1, actor_hidden_size_list=[128, 128], critic_hidden_size_list=[128, 128]),
        discount_factor=0.99,
        learn=dict(
            update_per_collect=4,
            batch_size=128,
            learning_rate_q=1e-3,
            learning_rate_policy=1e-3,
            learning_rate_alpha=3e-4,
            target_theta=0.005,
            learner=dict(hook=dict(save_ckpt_after_iter=10000)),
        ),
        collect=dict(n_sample=4),
        eval=dict(evaluator=dict(eval_freq_envstep=1000, confirm_episode=100)),
        other=dict(replay_buffer=dict(replay_buffer_size=100000)),
    ),
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
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="sac"),
    replay_buffer=dict(type="naive"),
    reward_model=dict(type="gail"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_reward_model

    serial_pipeline_reward_model([main_config, create_config], seed=0)
