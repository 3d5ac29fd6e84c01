"""PPO on Pendulum-v1 (continuous): `stride -m serial -e pendulum -p ppo -s 0` (or `-c` this file).

Stops at -250 (DI-engine's threshold). Gaussian policy with separate actor and critic networks; sampled actions are
clipped by the policy to the env's action space [-2, 2] (``policy.action_range``, filled from the env).
Hyper-parameters after rl-baselines3-zoo's Pendulum PPO (gSDE off).
Evaluation: a 10-episode screen every 1,000 env steps; a screen at the stop value stops the run
only if 100 further episodes of that policy reach it too (``confirm_episode``), so a lucky screen
never ends a run with a policy that does not hold (benchmarks/learning judges by the same rule).
"""

main_config = dict(
    exp_name="pendulum_ppo",
    env=dict(
        env_id="Pendulum-v1",
        collector_env_num=4,
        evaluator_env_num=10,
        # a 10-episode screen; a passing one must hold on 100 further episodes (confirm_episode)
        n_evaluator_episode=10,
        stop_value=-250,
    ),
    policy=dict(
        model=dict(obs_shape=3, action_shape=1, action_space="continuous", share_encoder=False,
                   encoder_hidden_size_list=[64, 64], actor_head_hidden_size=64, critic_head_hidden_size=64,
                   sigma_init=1.0),
        discount_factor=0.9,
        gae_lambda=0.95,
        learn=dict(
            epoch_per_collect=10,
            batch_size=64,
            learning_rate=1e-3,
            entropy_weight=0.0,
            value_clip_ratio=None,
            learner=dict(hook=dict(save_ckpt_after_iter=100)),
        ),
        collect=dict(n_sample=4096),
        eval=dict(evaluator=dict(eval_freq_envstep=1000, confirm_episode=100)),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="ppo"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_onpolicy

    serial_pipeline_onpolicy([main_config, create_config], seed=0)
