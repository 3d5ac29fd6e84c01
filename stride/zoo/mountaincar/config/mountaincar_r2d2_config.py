"""R2D2 on MountainCar-v0, the control for R2D3: `stride -m serial -e mountaincar -p r2d2 -s 0`.

Reward -1 every step until the car reaches the flag (the episode ends at 200 steps otherwise): with
epsilon-greedy exploration the flag is reached only by chance, and until then there is nothing to learn -- the
hard-exploration case R2D3's demonstrations are for (``mountaincar_r2d3``, the same config plus
the demonstrations). The R2D2 part is ``cartpole_pomdp_r2d2``'s (small LSTM, sequences of 8 burn-in
+ 16 learnt + 3 n-step rows, 64 learnt rows per env step, epsilon 0.95 -> 0.05). Stop value -150 (the
flag within 150 steps on average; gym's "solved" is -110), confirmed over 100 further episodes.
Measured 2026-11-26 (60k env-step budget, seeds 0 / 1 / 2): no confirmed stop / 22,032 / 28,152 env
steps; 100 fresh episodes -200.0 / -122.2 / -146.8 (``benchmarks/r2d3/README.md``).
"""

main_config = dict(
    exp_name="mountaincar_r2d2",
    env=dict(
        env_id="MountainCar-v0",
        collector_env_num=8,
        evaluator_env_num=8,
        # a 10-episode screen; a passing one must hold on 100 further episodes (confirm_episode)
        n_evaluator_episode=10,
        stop_value=-150,
    ),
    policy=dict(
        model=dict(obs_shape=2, action_shape=3, encoder_hidden_size_list=[64], hidden_size=64, dueling=False,
                   head_layer_num=0),
        discount_factor=0.99,
        nstep=3,
        burnin_step=8,
        learn_unroll_len=16,
        learn=dict(
            update_per_collect=16,
            batch_size=32,
            learning_rate=1e-3,
            target_update_type="assign",
            target_update_freq=100,
            learner=dict(hook=dict(save_ckpt_after_iter=1000)),
        ),
        collect=dict(n_sample=8),
        eval=dict(evaluator=dict(eval_freq_envstep=2000, confirm_episode=100)),
        other=dict(
            eps=dict(type="exp", start=0.95, end=0.05, decay=10000),
            replay_buffer=dict(replay_buffer_size=5000),
        ),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="r2d2"),
    replay_buffer=dict(type="advanced"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
