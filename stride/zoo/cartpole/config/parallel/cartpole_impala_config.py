"""IMPALA on CartPole-v1 on the parallel pipeline: `stride -m parallel -c <this file> -s 0`.

The serial config's algorithm (``../cartpole_impala_config.py``, DI-engine's CartPole IMPALA
settings, stop 475) with its 8 envs split over two collector actors of 4 envs each, as IMPALA was
made to run: actors unroll with the weights they last received, the learner corrects for their lag
with v-trace (the ``log_prob`` each collector recorded is the behaviour policy's). Every batch of 8
unrolls a collector sends is followed by 2 gradient steps of 16 unrolls, the serial ratio (16
unrolls, 4 steps). ``system_config`` names the roles and their Ray CPU shares (2 collectors x 0.5 +
learner 0.5 + replay 0: fits a 2-core machine).
"""

main_config = dict(
    exp_name="cartpole_impala_parallel",
    env=dict(
        env_id="CartPole-v1",
        collector_env_num=4,  # per collector actor
        evaluator_env_num=8,
        n_evaluator_episode=10,
        stop_value=475,
    ),
    policy=dict(
        model=dict(obs_shape=4, action_shape=2, encoder_hidden_size_list=[64, 64]),
        discount_factor=0.9,
        lambda_=0.95,
        learn=dict(
            update_per_collect=2,
            batch_size=16,
            learning_rate=5e-4,
            value_weight=0.5,
            entropy_weight=1e-4,
            learner=dict(hook=dict(save_ckpt_after_iter=1000)),
        ),
        collect=dict(n_sample=8, unroll_len=8),
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

system_config = dict(
    collector_num=2,
    learner_num=1,
    collector_cpus=0.5,
    learner_cpus=0.5,
    replay_cpus=0.0,
    replay_snapshot_freq=50,
)

if __name__ == "__main__":
    from stride.entry import parallel_pipeline

    parallel_pipeline([main_config, create_config, system_config], seed=0)
