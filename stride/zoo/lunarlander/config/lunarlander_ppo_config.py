"""PPO on LunarLander-v3 (discrete): `stride -m serial -e lunarlander -p ppo -s 0` (or `-c` this file).

Needs Box2D: ``pip install 'stride-rl[box2d]'``. Stops at 200 over 100 evaluation episodes.
Hyper-parameters after rl-baselines3-zoo's LunarLander PPO (16 envs x 1024 steps, 4 epochs).
"""

main_config = dict(
    exp_name="lunarlander_ppo",
    env=dict(
        env_id="LunarLander-v3",
        collector_env_num=16,
        evaluator_env_num=8,
        n_evaluator_episode=100,
        stop_value=200,
    ),
    policy=dict(
        model=dict(obs_shape=8, action_shape=4, share_encoder=False, encoder_hidden_size_list=[64, 64],
                   actor_head_hidden_size=64, critic_head_hidden_size=64),
        discount_factor=0.999,
        gae_lambda=0.98,
        learn=dict(
            epoch_per_collect=4,
            batch_size=64,
            learning_rate=3e-4,
            entropy_weight=0.01,
            learner=dict(hook=dict(save_ckpt_after_iter=50)),
        ),
        collect=dict(n_sample=16384),
        eval=dict(evaluator=dict(eval_freq=5)),
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
