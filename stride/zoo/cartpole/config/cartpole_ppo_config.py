"""PPO on CartPole-v1: `stride -m serial -e cartpole -p ppo -s 0` (or `-c` this file).

Stops at 475 (of 500). Hyper-parameters after rl-baselines3-zoo's CartPole PPO (short rollouts,
many epochs, low gamma/lambda), tuned for a fast CPU run.
Evaluation: a 10-episode screen every 1,000 env steps; a screen at the stop value stops the run
only if 100 further episodes of that policy reach it too (``confirm_episode``), so a lucky screen
never ends a run with a policy that does not hold (benchmarks/learning judges by the same rule).
"""

main_config = dict(
    exp_name="cartpole_ppo",
    env=dict(
        env_id="CartPole-v1",
        collector_env_num=8,
        evaluator_env_num=8,
        # a 10-episode screen; a passing one must hold on 100 further episodes (confirm_episode)
        n_evaluator_episode=10,
        stop_value=475,
    ),
    policy=dict(
        model=dict(obs_shape=4, action_shape=2, encoder_hidden_size_list=[64, 64], actor_head_hidden_size=64,
                   critic_head_hidden_size=64),
        discount_factor=0.98,
        gae_lambda=0.8,
        learn=dict(
            # 5 epochs of 128-sample minibatches (10 gradient steps per collect), from a sweep over seeds 0-7
            # (2026-11-22): steadier policies and half the CPU per collect of rl-zoo3's 20 x 256
            epoch_per_collect=5,
            batch_size=128,
            learning_rate=1e-3,
            lr_anneal_collects=400,
            entropy_weight=0.0,
            learner=dict(hook=dict(save_ckpt_after_iter=100)),
        ),
        collect=dict(n_sample=256),
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
