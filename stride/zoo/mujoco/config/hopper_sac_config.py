"""SAC on Hopper-v5: `stride -m serial -e hopper -p sac -s 0` (or `-c` this file). Needs ``stride-rl[mujoco]``.

Hyper-parameters: rl-baselines3-zoo's hyperparams/sac.yml, Hopper-v4 (its MuJoCo defaults, used for the
v4 envs; the v5 envs share their dynamics), i.e. Stable-Baselines3's SAC defaults with 10,000 random
warm-up steps: one env, one gradient step per env step, batch 256, Adam 3e-4 for critics, actor and
temperature (automatic entropy, target -|A|), tau 0.005, gamma 0.99, replay 1e6, [256, 256] MLPs.
Those are also the SAC paper's (Haarnoja et al. 2018, appendix D) values; 1 M env steps in the zoo.
Evaluation: a 10-episode screen every 10,000 env steps; a passing screen must hold on 100 more.
"""

main_config = dict(
    exp_name="hopper_sac",
    env=dict(
        env_id="Hopper-v5",
        collector_env_num=1,
        evaluator_env_num=5,
        n_evaluator_episode=10,
        stop_value=3000,
    ),
    policy=dict(
        random_collect_size=10000,  # learning_starts
        model=dict(obs_shape=11, action_shape=3, actor_hidden_size_list=[256, 256],
                   critic_hidden_size_list=[256, 256], activation="relu"),
        discount_factor=0.99,
        learn=dict(
            update_per_collect=1,  # gradient_steps
            batch_size=256,
            learning_rate_q=3e-4,
            learning_rate_policy=3e-4,
            learning_rate_alpha=3e-4,
            target_theta=0.005,  # tau
            learner=dict(hook=dict(save_ckpt_after_iter=100000)),
        ),
        collect=dict(n_sample=1),  # train_freq 1
        eval=dict(evaluator=dict(eval_freq_envstep=10000, confirm_episode=100)),
        other=dict(replay_buffer=dict(replay_buffer_size=1000000)),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="sac"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
