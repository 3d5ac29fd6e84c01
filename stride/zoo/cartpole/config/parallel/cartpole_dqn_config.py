"""DQN on CartPole-v1 on the parallel pipeline: `stride -m parallel -c <this file> -s 0`.

The serial config's algorithm (``../cartpole_dqn_config.py``) with its 8 envs split over two
collector actors of 4 envs each; every 8-transition batch a collector sends is followed by 4
gradient steps, the serial ratio. ``system_config`` names the roles and their Ray CPU shares
(2 collectors x 0.5 + learner 0.5 + replay 0: fits a 2-core machine).

Measured 2026-11-25 on 2 cores shared with two other benchmarks (load average ~6), nice 5, seeds 0-2:
the 100-episode confirmation (220-299) holds at 1,000-2,000 env steps; 23-26 s wall per run, of which
~7 s start the local Ray instance and ~6-9 s start the actors (a run is not bit-reproducible: which
collector's batch arrives first follows their speed).
"""

main_config = dict(
    exp_name="cartpole_dqn_parallel",
    env=dict(
        env_id="CartPole-v1",
        collector_env_num=4,  # per collector actor
        evaluator_env_num=8,
        n_evaluator_episode=10,
        stop_value=195,
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
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
    replay_buffer=dict(type="naive"),
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
