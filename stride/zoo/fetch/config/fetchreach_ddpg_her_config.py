"""DDPG + HER on FetchReach-v4: `stride -m serial -e fetchreach -p ddpg_her -s 0` (or `-c` this file).
Needs ``stride-rl[robotics]``.

Hyper-parameters: rl-baselines3-zoo's ``hyperparams/her.yml``, ``FetchReach-v1`` (DDPG, the
Stable-Baselines 2 era entry kept there as a comment): HER 'future' goals, 4 relabelled per original,
batch 256, gamma 0.95, Adam 1e-3 for actor and critic, Gaussian action noise 0.2, [256, 256, 256]
MLPs, replay of 1e6 transitions; 20,000 env steps. Not taken: ``random_exploration: 0.3`` (a random
action 30 % of the time, SB2-HER only) and observation normalisation; in their place 1,000 uniformly
random warm-up steps (that file's TD3 entry's ``learning_starts``). Collection, HER sampling and the
success score as in ``fetchreach_sac_her_config.py``.
"""

main_config = dict(
    exp_name="fetchreach_ddpg_her",
    env=dict(
        env_id="FetchReach-v4",
        collector_env_num=1,
        evaluator_env_num=4,
        n_evaluator_episode=20,
        stop_value=0.9,
    ),
    policy=dict(
        random_collect_size=1000,
        model=dict(obs_shape=13, action_shape=4, actor_hidden_size_list=[256, 256, 256],
                   critic_hidden_size_list=[256, 256, 256]),
        discount_factor=0.95,
        learn=dict(
            update_per_collect=50,  # one gradient step per env step (one 50-step episode per collect)
            batch_size=256,
            learning_rate_actor=1e-3,
            learning_rate_critic=1e-3,
            target_theta=0.005,
            learner=dict(hook=dict(save_ckpt_after_iter=10000)),
        ),
        collect=dict(n_episode=1, noise_type="gauss", noise_sigma=0.2),
        eval=dict(evaluator=dict(eval_freq_envstep=2000, confirm_episode=100, metric="success")),
        other=dict(replay_buffer=dict(replay_buffer_size=20000)),  # episodes: 1e6 transitions
    ),
    reward_model=dict(her_strategy="future", her_replay_k=4, sample_per_episode=16),
)

create_config = dict(
    env=dict(type="fetch"),
    env_manager=dict(type="base"),
    policy=dict(type="ddpg"),
    collector=dict(type="episode"),
    replay_buffer=dict(type="episode"),
    reward_model=dict(type="her"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_reward_model

    serial_pipeline_reward_model([main_config, create_config], seed=0)
