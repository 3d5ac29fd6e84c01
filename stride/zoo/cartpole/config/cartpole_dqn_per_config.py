"""DQN with prioritized replay (PER) on CartPole-v1 through AdvancedReplayBuffer: `stride -m serial -c` this file."""

main_config = dict(
    exp_name="cartpole_dqn_per",
    env=dict(
        env_id="CartPole-v1",
        collector_env_num=8,
        evaluator_env_num=8,
        # a 10-episode screen; a passing one must hold on 100 further episodes (confirm_episode)
        n_evaluator_episode=10,
        stop_value=195,
    ),
    policy=dict(
        model=dict(obs_shape=4, action_shape=2, encoder_hidden_size_list=[128, 128], dueling=False, head_layer_num=0),
        discount_factor=0.97,
        nstep=1,
        # prioritized replay: the learner returns |TD error| per sample, the buffer samples by it
        priority=True,
        priority_IS_weight=True,
        learn=dict(
            update_per_collect=3,
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
    replay_buffer=dict(type="advanced"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
