"""TD3 on Hopper-v5: `stride -m serial -e hopper -p td3 -s 0` (or `-c` this file). Needs ``stride-rl[mujoco]``.

Hyper-parameters: rl-baselines3-zoo's hyperparams/td3.yml, Hopper-v4 (its MuJoCo defaults for the v4
envs): 10,000 random warm-up steps, Gaussian exploration noise 0.1, one gradient step per env step,
Adam 1e-3 for actor and critics, batch 256, [400, 300] MLPs; Stable-Baselines3's TD3 defaults for
the rest, which are the TD3 paper's (Fujimoto et al. 2018): tau 0.005, gamma 0.99, actor delay 2,
target policy noise 0.2 clipped at 0.5, replay 1e6. 1 M env steps in the zoo.
Tianshou's MuJoCo TD3 benchmark (``examples/mujoco/mujoco_td3.py`` at e605bdea; 1,583 at its 300k, v3 env,
which is 325k env steps here: its trainer counts from the end of the warm-up) differs in three keys: [256, 256] MLPs, Adam 3e-4, 25,000 warm-up steps (its README:
"no enough evidence" for them); these rl-zoo3 values are kept for the 300k budget of issue 32 (an
earlier start and larger steps). Measured (issue 32, 2026-11-30, ``benchmarks/curves/README.md``): the
policy returned at 300k, seed 0, on 100 fresh episodes: **3,168.8** (best 10-episode evaluation 3,195.9,
99 %; train CPU 5,282 s), 200 % of Tianshou's 1,583; a late riser (near 400 until 150k).
Evaluation: a 10-episode screen every 10,000 env steps; a passing screen must hold on 100 more.
"""

main_config = dict(
    exp_name="hopper_td3",
    env=dict(
        env_id="Hopper-v5",
        collector_env_num=1,
        evaluator_env_num=5,
        n_evaluator_episode=10,
        stop_value=3000,
    ),
    policy=dict(
        random_collect_size=10000,  # learning_starts
        model=dict(obs_shape=11, action_shape=3, actor_hidden_size_list=[400, 300],
                   critic_hidden_size_list=[400, 300], activation="relu"),
        discount_factor=0.99,
        learn=dict(
            update_per_collect=1,  # gradient_steps
            batch_size=256,
            learning_rate_actor=1e-3,
            learning_rate_critic=1e-3,
            target_theta=0.005,  # tau
            learner=dict(hook=dict(save_ckpt_after_iter=100000)),
        ),
        collect=dict(n_sample=1, noise_sigma=0.1),  # train_freq 1; noise_type normal, noise_std 0.1
        eval=dict(evaluator=dict(eval_freq_envstep=10000, confirm_episode=100)),
        other=dict(replay_buffer=dict(replay_buffer_size=1000000)),
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
