"""Best config of the Stride tuning study 'cartpole_dqn' (sqlite:////tmp/p26_tune/run4/study/study.db), trial 17:
train CPU-seconds to the confirmed stop value: 0.41 (median over run seeds 20..24: [1.6908138670000312, 0.4144735240000159, 0.383896821999997, 0.39118149099999755, 2.799108116000042]).

Run it: stride -m serial -c best_config.py -s 0
Searched values: {'learn.learning_rate': 0.002450392606678038, 'learn.batch_size': 32, 'learn.update_per_collect': 6, 'learn.target_update_freq': 18, 'collect.n_sample': 16, 'discount_factor': 0.995, 'nstep': 3, 'other.eps.end': 0.18736625909497448, 'other.eps.decay': 14917, 'model.encoder_hidden_size_list': [128, 128], 'random_collect_size': 1000}
"""

main_config = dict(
    exp_name='cartpole_dqn',
    env=dict(
        env_id='CartPole-v1',
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=10,
        stop_value=195,
    ),
    policy=dict(
        model=dict(
            obs_shape=4,
            action_shape=2,
            encoder_hidden_size_list=[128, 128],
            dueling=False,
            head_layer_num=0,
        ),
        discount_factor=0.995,
        nstep=3,
        learn=dict(
            update_per_collect=6,
            batch_size=32,
            learning_rate=0.002450392606678038,
            target_update_freq=18,
            learner=dict(
                hook=dict(
                    save_ckpt_after_iter=1000,
                ),
            ),
        ),
        collect=dict(
            n_sample=16,
        ),
        eval=dict(
            evaluator=dict(
                eval_freq_envstep=1000,
                confirm_episode=100,
            ),
        ),
        other=dict(
            eps=dict(
                type='exp',
                start=0.95,
                end=0.18736625909497448,
                decay=14917,
            ),
            replay_buffer=dict(
                replay_buffer_size=20000,
            ),
        ),
        random_collect_size=1000,
    ),
)

create_config = dict(
    env=dict(
        type='gymnasium',
    ),
    env_manager=dict(
        type='base',
    ),
    policy=dict(
        type='dqn',
    ),
    replay_buffer=dict(
        type='naive',
    ),
)
