"""Behaviour cloning on CartPole-v1 from 10 expert episodes: `stride -m offline -e cartpole -p bc -s 0`.

Trained offline (no env step while learning) by ``serial_pipeline_offline`` on the dataset named by
``policy.collect.data_path``; evaluated online. The expert's demonstrations come first:

    stride -m serial -e cartpole -p ppo -s 0                                  # the expert (500)
    stride -m collect_demo -e cartpole -p ppo --ckpt cartpole_ppo_seed0 --episodes 10 --out cartpole_expert_demo
    stride -m offline -e cartpole -p bc -s 0

(the same dataset as ``cartpole_dqn_gail``'s). The stop value, 475, is 95 % of the expert's 500,
confirmed over 100 episodes. Cross-entropy on a 2 x 128 MLP's logits, Adam at 1e-3 (DI-engine's
``cartpole_bc_config`` uses 1e-2). Measured 2026-11-25, seeds 0-2 (expert = the PPO config's run of
the same seed, 500.0 / 499.9 / 500.0 over 100 episodes): confirmed 489.7 / 499.5 / 500.0 after
200 / 400 / 200 gradient steps, 0.1-0.2 train CPU-s.
"""

main_config = dict(
    exp_name="cartpole_bc",
    env=dict(
        env_id="CartPole-v1",
        collector_env_num=1,
        evaluator_env_num=8,
        n_evaluator_episode=10,
        stop_value=475,
    ),
    policy=dict(
        continuous=False,
        model=dict(obs_shape=4, action_shape=2, encoder_hidden_size_list=[128, 128], dueling=False, head_layer_num=0),
        learn=dict(
            batch_size=64,
            learning_rate=1e-3,
            learner=dict(hook=dict(save_ckpt_after_iter=1000)),
        ),
        collect=dict(data_path="cartpole_expert_demo"),
        # a 10-episode screen every 200 gradient steps; a passing one must hold on 100 more episodes
        eval=dict(evaluator=dict(eval_freq=200, confirm_episode=100)),
        other=dict(replay_buffer=dict(replay_buffer_size=100000)),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="bc"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_offline

    serial_pipeline_offline([main_config, create_config], seed=0)
