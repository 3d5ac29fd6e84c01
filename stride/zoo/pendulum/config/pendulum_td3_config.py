"""TD3 on Pendulum-v1: `stride -m serial -e pendulum -p td3 -s 0` (or `-c` this file).

The policy hands out torques in the env's own range [-2, 2] (learnt in [-1, 1]); 800 uniformly random
warm-up transitions, then one critic step per env step, Gaussian exploration noise 0.1.
Evaluation: a 10-episode screen every 1,000 env steps; a screen at the stop value stops the run
only if 100 further episodes of that policy reach it too (``confirm_episode``), so a lucky screen
never ends a run with a policy that does not hold (benchmarks/learning judges by the same rule).
TD3's delayed actor learns the swing-up later and more steeply than DDPG/SAC: with a single
100-episode evaluation every 1000 steps, seed 4 once stopped on a lucky -245.6 whose fresh mean was -292.9.
"""

main_config = dict(
    exp_name="pendulum_td3",
    env=dict(
        env_id="Pendulum-v1",
        collector_env_num=4,
        evaluator_env_num=10,
        # a 10-episode screen; a passing one must hold on 100 further episodes (confirm_episode)
        n_evaluator_episode=10,
        stop_value=-250,
    ),
    policy=dict(
        random_collect_size=800,
        model=dict(obs_shape=3, action_shape=1, actor_hidden_size_list=[128, 128], critic_hidden_size_list=[128, 128]),
        discount_factor=0.99,
        learn=dict(
            update_per_collect=4,
            batch_size=128,
            learning_rate_actor=1e-3,
            learning_rate_critic=1e-3,
            target_theta=0.005,
            learner=dict(hook=dict(save_ckpt_after_iter=10000)),
        ),
        collect=dict(n_sample=4, noise_sigma=0.1),
        eval=dict(evaluator=dict(eval_freq_envstep=1000, confirm_episode=100)),
        other=dict(replay_buffer=dict(replay_buffer_size=100000)),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="td3"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
