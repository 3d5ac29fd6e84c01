"""R2D2 on CartPole with the velocities hidden (``[x, theta]`` only): `stride -m serial -e cartpole_pomdp -p r2d2 -s 0`.

A memoryless Q-network cannot tell which way the pole moves from one frame; the LSTM infers it
from the history. Same env-step budget and exploration as ``cartpole_pomdp_dqn`` (the control).
Stop value 195 (DI-engine's CartPole R2D2 stop value), confirmed over 100 further episodes.

Measured 2026-11-25 (shared 2-core box, load 6-10; budget 100k env steps): seeds 0 / 1 / 2 stop at
16,088 / 20,104 / 12,096 env steps after 16.2 / 20.2 / 11.5 train CPU s; the final policy scores
320.5 / 297.2 / 242.6 on 100 fresh episodes. ``cartpole_pomdp_dqn`` on the same 100k steps: no stop.
"""

main_config = dict(
    exp_name="cartpole_pomdp_r2d2",
    env=dict(
        env_id="CartPole-v1",
        collector_env_num=8,
        evaluator_env_num=8,
        # a 10-episode screen; a passing one must hold on 100 further episodes (confirm_episode)
        n_evaluator_episode=10,
        stop_value=195,
    ),
    policy=dict(
        model=dict(obs_shape=2, action_shape=2, encoder_hidden_size_list=[64], hidden_size=64, dueling=False,
                   head_layer_num=0),
        discount_factor=0.99,
        nstep=3,
        burnin_step=8,
        learn_unroll_len=16,
        learn=dict(
            # 16 x 32 sequences x 16 learnt rows per 128 env steps: 64 rows learnt per env step
            update_per_collect=16,
            batch_size=32,
            learning_rate=1e-3,
            target_update_type="assign",
            target_update_freq=100,
            learner=dict(hook=dict(save_ckpt_after_iter=1000)),
        ),
        # 8 sequences per collect: 16 env steps per env
        collect=dict(n_sample=8),
        eval=dict(evaluator=dict(eval_freq_envstep=2000, confirm_episode=100)),
        other=dict(
            eps=dict(type="exp", start=0.95, end=0.05, decay=10000),
            replay_buffer=dict(replay_buffer_size=5000),
        ),
    ),
)

create_config = dict(
    env=dict(type="cartpole_pomdp"),
    env_manager=dict(type="base"),
    policy=dict(type="r2d2"),
    replay_buffer=dict(type="advanced"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
