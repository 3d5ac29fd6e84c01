"""DQN on LunarLander-v3: `stride -m serial -e lunarlander -p dqn -s 0` (or `-c` this file).

Needs the Box2D extra: ``pip install "stride-rl[box2d]"``. Hyper-parameters follow DI-engine's
``lunarlander_dqn_config`` (dueling [512, 64], 3-step double DQN, gamma 0.99), on LunarLander-v3
(Gymnasium 1.x dropped v2) with one subprocess per env.
"""

main_config = dict(
    exp_name="lunarlander_dqn",
    env=dict(
        env_id="LunarLander-v3",
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=8,
        stop_value=200,
    ),
    policy=dict(
        model=dict(obs_shape=8, action_shape=4, encoder_hidden_size_list=[512, 64], dueling=True),
        discount_factor=0.99,
        nstep=3,
        learn=dict(
            update_per_collect=10,
            batch_size=64,
            learning_rate=1e-3,
            target_update_freq=100,
        ),
        collect=dict(n_sample=64),
        eval=dict(evaluator=dict(eval_freq=1000)),
        other=dict(
            eps=dict(type="exp", start=0.95, end=0.1, decay=50000),
            replay_buffer=dict(replay_buffer_size=100000),
        ),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
