"""TD3 on HalfCheetah-v5: `stride -m serial -e halfcheetah -p td3 -s 0` (or `-c` this file). Needs ``stride-rl[mujoco]``.

Hyper-parameters: Tianshou's MuJoCo TD3 benchmark (``examples/mujoco/mujoco_td3.py`` at e605bdea, the
commit its README's tables name; 7,546 at its 300k on HalfCheetah-v3, which is 325k env steps here: its trainer
counts from the end of the warm-up; at 300k env steps its ten seeds average 7,461): [256, 256] MLPs, Adam 3e-4
for actor and critics, 25,000 random warm-up steps, Gaussian exploration noise 0.1, batch 256; the TD3 paper's
(Fujimoto et al. 2018) tau 0.005, gamma 0.99, actor delay 2, target policy noise 0.2 clipped at 0.5, replay 1e6.
One change from Tianshou: **two gradient steps per env step** (its ``update_per_step`` is 1; the actor still
moves once every two critic steps, so once per env step), the update-to-data ratio issue 32 names.
1 M env steps in the zoo.
Measured at 300k (issue 32, ``benchmarks/curves/README.md``; the policy a run returns, 100 fresh episodes):
7,630.3 / 5,893.9 / 9,249.4 on seeds 0 / 1 / 2, median 7,630.3 (101 % of Tianshou's 7,546), each at 100-103 %
of its best 10-episode evaluation, 3 of the 300 fresh episodes below 4,000; train CPU ~5,850 s a run. With one
gradient step per env step (Tianshou's value, shipped until then): 5,525.1 / 7,450.8 / 8,398.9, median 7,450.8
(99 %), 21 of 300 fresh episodes below 4,000 (seed 0's policy fell early on 19), ~3,760 s a run: two steps reach
~3,200 by 50k env steps against ~1,300 and cost ~1.55x the train CPU. rl-baselines3-zoo's values (its
hyperparams/td3.yml, HalfCheetah-v4: [400, 300] MLPs, Adam 1e-3, 10,000 warm-up steps), shipped before
Tianshou's, scored 6,042.4 / 7,403.0 on seeds 0 / 1, no better at 1.4-1.5x the one-step train CPU.
Evaluation: a 10-episode screen every 10,000 env steps; a passing screen must hold on 100 more.
"""

main_config = dict(
    exp_name="halfcheetah_td3",
    env=dict(
        env_id="HalfCheetah-v5",
        collector_env_num=1,
        evaluator_env_num=5,
        n_evaluator_episode=10,
        stop_value=12000,
    ),
    policy=dict(
        random_collect_size=25000,  # start_timesteps
        model=dict(obs_shape=17, action_shape=6, actor_hidden_size_list=[256, 256],
                   critic_hidden_size_list=[256, 256], activation="relu"),
        discount_factor=0.99,
        learn=dict(
            update_per_collect=2,  # update_per_step (Tianshou: 1)
            batch_size=256,
            learning_rate_actor=3e-4,
            learning_rate_critic=3e-4,
            target_theta=0.005,  # tau
            learner=dict(hook=dict(save_ckpt_after_iter=100000)),
        ),
        collect=dict(n_sample=1, noise_sigma=0.1),  # step_per_collect 1; exploration_noise 0.1
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
