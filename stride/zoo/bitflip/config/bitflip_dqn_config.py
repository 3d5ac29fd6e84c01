"""Plain DQN on 15-bit BitFlip (no HER): `stride -m serial -e bitflip -p dqn -s 0`.

The control for ``bitflip_dqn_her``: the same network, optimiser, exploration and updates per env
step, transitions replayed as collected. With 15 bits a random walk almost never reaches the goal,
so nearly every reward is 0 and DQN has nothing to learn from (the HER paper's point; DI-engine
reports no convergence within 20 M env steps). Measured: ``benchmarks/her/``.
"""

N_BITS = 15

main_config = dict(
    exp_name="bitflip_dqn",
    env=dict(
        n_bits=N_BITS,
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=16,
        stop_value=0.9,
    ),
    policy=dict(
        model=dict(obs_shape=2 * N_BITS, action_shape=N_BITS, encoder_hidden_size_list=[128, 128, 64],
                   dueling=False, head_layer_num=0),  # a plain 128-128-64 MLP and a linear Q layer
        discount_factor=0.9,
        nstep=1,
        learn=dict(
            update_per_collect=10,
            batch_size=128,
            learning_rate=5e-4,
            target_update_freq=500,
            learner=dict(hook=dict(save_ckpt_after_iter=10000)),
        ),
        # 8 episodes' worth of steps per collect, as the HER config
        collect=dict(n_sample=8 * N_BITS),
        eval=dict(evaluator=dict(eval_freq_envstep=5000, confirm_episode=100)),
        other=dict(
            eps=dict(type="exp", start=0.2, end=0.2, decay=1),
            replay_buffer=dict(replay_buffer_size=4000 * N_BITS),
        ),
    ),
)

create_config = dict(
    env=dict(type="bitflip"),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
