"""DQN on CartPole with the velocities hidden: `stride -m serial -e cartpole_pomdp -p dqn -s 0`.

The control for ``cartpole_pomdp_r2d2``: a memoryless Q-network of the same width, the same
exploration schedule, discount and n-step, and as many transitions learnt from per env step. One
frame of ``[x, theta]`` does not say which way the pole moves, so DQN should stall well below the
stop value that R2D2 reaches within the same env-step budget.

Measured 2026-11-25 (shared 2-core box, load 6-10): seeds 0 / 1 / 2 never stop within 100k env steps
(84 / 94 / 90 train CPU s); the best 10-episode screen of 50 is 49.3 / 48.6 / 47.6, and the final
policy scores 38.8 (seed 1) / 35.6 (seed 2) on 100 fresh episodes. R2D2 confirms 195 by 12k-20k steps.
"""

main_config = dict(
    exp_name="cartpole_pomdp_dqn",
    env=dict(
        env_id="CartPole-v1",
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=10,
        stop_value=195,
    ),
    policy=dict(
        model=dict(obs_shape=2, action_shape=2, encoder_hidden_size_list=[64, 64], dueling=False, head_layer_num=0),
        discount_factor=0.99,
        nstep=3,
        learn=dict(
            # 8 x 64 transitions per 8 env steps: 64 learnt per env step, as cartpole_pomdp_r2d2
            update_per_collect=8,
            batch_size=64,
            learning_rate=1e-3,
            target_update_freq=100,
            learner=dict(hook=dict(save_ckpt_after_iter=1000)),
        ),
        collect=dict(n_sample=8),
        eval=dict(evaluator=dict(eval_freq_envstep=2000, confirm_episode=100)),
        other=dict(
            eps=dict(type="exp", start=0.95, end=0.05, decay=10000),
            replay_buffer=dict(replay_buffer_size=20000),
        ),
    ),
)

create_config = dict(
    env=dict(type="cartpole_pomdp"),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
