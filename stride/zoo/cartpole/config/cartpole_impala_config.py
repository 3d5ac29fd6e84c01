"""IMPALA on CartPole-v1: `stride -m serial -e cartpole -p impala -s 0` (or `-c` this file).

Source: DI-engine's ``dizoo/classic_control/cartpole/config/cartpole_impala_config.py``: 8 envs,
unrolls of 8 steps, 16 unrolls per collect, 4 gradient steps of 16 unrolls, Adam lr 5e-4,
gamma 0.9, lambda 0.95, entropy 1e-4, every ratio clipped at 1, a buffer of 1,000 unrolls each
used at most 16 times. The serial off-policy pipeline runs it (collector -> replay buffer -> learner).
Stops at 475 (of 500; DI-engine stops at 195), the mark issue 16's benchmarks compare at. With DI's
settings, seeds 0 / 1 / 2 confirm it at 9,112 / 11,048 / 10,056 env steps, 1.15 / 1.43 / 1.34 train
CPU s, 100-episode confirmation means 500.0 / 500.0 / 497.0 (2026-11-25, 2-core box at load ~3.5).
Evaluation: a 10-episode screen every 1,000 env steps; a screen at the stop value stops the run
only if 100 further episodes of that policy reach it too (``confirm_episode``).
"""

main_config = dict(
    exp_name="cartpole_impala",
    env=dict(
        env_id="CartPole-v1",
        collector_env_num=8,
        evaluator_env_num=8,
        # a 10-episode screen; a passing one must hold on 100 further episodes (confirm_episode)
        n_evaluator_episode=10,
        stop_value=475,
    ),
    policy=dict(
        model=dict(obs_shape=4, action_shape=2, encoder_hidden_size_list=[64, 64]),
        discount_factor=0.9,
        lambda_=0.95,
        learn=dict(
            update_per_collect=4,
            batch_size=16,
            learning_rate=5e-4,
            value_weight=0.5,
            entropy_weight=1e-4,
            learner=dict(hook=dict(save_ckpt_after_iter=1000)),
        ),
        collect=dict(n_sample=16, unroll_len=8),
        eval=dict(evaluator=dict(eval_freq_envstep=1000, confirm_episode=100)),
        other=dict(replay_buffer=dict(replay_buffer_size=1000, max_use=16, priority=False)),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="impala"),
    replay_buffer=dict(type="advanced"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
