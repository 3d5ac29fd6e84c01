"""TD3 on Pendulum-v1: `stride -m serial -e pendulum -p td3 -s 0` (or `-c` this file).

The policy hands out torques in the env's own range [-2, 2] (learnt in [-1, 1]); 800 uniformly random
warm-up transitions, then one critic step per env step, Gaussian exploration noise 0.1.
Evaluation: 100 episodes (about 2 CPU seconds, not training time) every 2000 train iterations (=
env steps after the warm-up). TD3's delayed actor learns the swing-up later and more steeply than
DDPG/SAC: evaluated every 1000, seed 4 stopped on a lucky -245.6 at 5800 env steps whose fresh
100-episode mean was -292.9 (with 20 episodes every 500, -280 to -300 happened for SAC/DDPG too).
"""

main_config = dict(
    exp_name="pendulum_td3",
    env=dict(
        env_id="Pendulum-v1",
        collector_env_num=4,
        evaluator_env_num=10,
        n_evaluator_episode=100,
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
        eval=dict(evaluator=dict(eval_freq=2000)),
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
