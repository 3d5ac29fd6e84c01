"""SQIL on CartPole-v1: `stride -m serial -e cartpole -p sqil -s 0` (or `-c` this file).

Soft Q-learning on the expert's transitions (reward 1) and the agent's own (reward 0), half and
half per batch; the env's reward is never stored. The expert's demonstrations come first:

    stride -m serial -e cartpole -p ppo -s 0                                  # the expert (500)
    stride -m collect_demo -e cartpole -p ppo --ckpt cartpole_ppo_seed0 --episodes 10 --out cartpole_expert_demo
    stride -m serial -e cartpole -p sqil -s 0

(the dataset ``cartpole_bc`` and ``cartpole_dqn_gail`` use). The stop value, 450, is 90 % of the
expert's 500, confirmed over 100 episodes. Temperature 0.12, gamma 0.97, batch 64, 8 transitions per
collect as DI-engine's ``cartpole_sqil_config``; the Q-net is ``cartpole_dqn_config``'s. Measured
2026-11-25, seeds 0-2 (PPO expert of the same seed, 500.0 / 499.9 / 500.0): confirmed 500.0 / 491.5 /
493.1 at 2,000 / 4,000 / 2,000 env steps, 1.0 / 1.8 / 1.0 train CPU-s.
"""

main_config = dict(
    exp_name="cartpole_sqil",
    env=dict(
        env_id="CartPole-v1",
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=10,
        stop_value=450,
    ),
    policy=dict(
        model=dict(obs_shape=4, action_shape=2, encoder_hidden_size_list=[128, 128], dueling=False, head_layer_num=0),
        discount_factor=0.97,
        nstep=1,
        learn=dict(
            update_per_collect=4,
            batch_size=64,
            learning_rate=1e-3,
            target_update_freq=25,
            alpha=0.12,
            learner=dict(hook=dict(save_ckpt_after_iter=1000)),
        ),
        collect=dict(n_sample=8, data_path="cartpole_expert_demo", demo_fraction=0.5),
        eval=dict(evaluator=dict(eval_freq_envstep=1000, confirm_episode=100)),
        other=dict(replay_buffer=dict(replay_buffer_size=20000)),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="sqil"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
