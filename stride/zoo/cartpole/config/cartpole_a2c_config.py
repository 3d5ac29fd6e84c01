"""A2C on CartPole-v1: `stride -m serial -e cartpole -p a2c -s 0` (or `-c` this file).

Stops at 195 over 100 evaluation episodes (the classic CartPole threshold).
"""

main_config = dict(
    exp_name="cartpole_a2c",
    env=dict(
        env_id="CartPole-v1",
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=100,
        stop_value=195,
    ),
    policy=dict(
        model=dict(obs_shape=4, action_shape=2, encoder_hidden_size_list=[64, 64], actor_head_hidden_size=64,
                   critic_head_hidden_size=64),
        discount_factor=0.99,
        gae_lambda=1.0,
        learn=dict(
            optimizer="rmsprop",
            learning_rate=7e-4,
            entropy_weight=0.0,
            learner=dict(hook=dict(save_ckpt_after_iter=1000)),
        ),
        collect=dict(n_sample=40),
        eval=dict(evaluator=dict(eval_freq=100)),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="a2c"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_onpolicy

    serial_pipeline_onpolicy([main_config, create_config], seed=0)
