"""Behaviour cloning on Pendulum-v1 (continuous) from 10 expert episodes: `stride -m offline -e pendulum -p bc -s 0`.

Trained offline (no env step while learning) by ``serial_pipeline_offline`` on the dataset named by
``policy.collect.data_path``; evaluated online. The expert's demonstrations come first:

    stride -m serial -e pendulum -p sac -s 0                                  # the expert
    stride -m collect_demo -e pendulum -p sac --ckpt pendulum_sac_seed0 --episodes 10 --out pendulum_expert_demo_10ep
    stride -m offline -e pendulum -p bc -s 0

The actor is SAC's (``qac``, tanh-squashed Gaussian, 2 x 128): BC learns its mean in [-1, 1] (the
dataset's torques in [-2, 2] mapped in) with the MSE loss, and hands torques out in [-2, 2].
Pendulum's returns are negative (0 is best), so "95 % of the expert" is read on the span from a
random policy (-1,208 over 100 episodes) to the expert (about -160): -1,208 + 0.95 x 1,048 ~ -212;
the stop value is -200. Measured 2026-11-25, seeds 0-2 (expert = the SAC config's run of the same
seed: -159.2 / -192.0 / -174.8 over 100 episodes): confirmed -175.8 / -173.5 / -197.3 after 1,000
gradient steps, 0.6-0.9 train CPU-s (98 / 102 / 98 % of the expert on that span).
"""

main_config = dict(
    exp_name="pendulum_bc",
    env=dict(
        env_id="Pendulum-v1",
        collector_env_num=1,
        evaluator_env_num=10,
        n_evaluator_episode=10,
        stop_value=-200,
    ),
    policy=dict(
        continuous=True,
        model=dict(obs_shape=3, action_shape=1, action_space="reparameterization", actor_hidden_size_list=[128, 128],
                   critic_hidden_size_list=[1]),  # BC trains the actor only: the critic is left minimal
        learn=dict(
            batch_size=128,
            learning_rate=1e-3,
            loss_type="mse",
            learner=dict(hook=dict(save_ckpt_after_iter=2000)),
        ),
        collect=dict(data_path="pendulum_expert_demo_10ep"),
        # a 10-episode screen every 500 gradient steps; a passing one must hold on 100 more episodes
        eval=dict(evaluator=dict(eval_freq=500, confirm_episode=100)),
        other=dict(replay_buffer=dict(replay_buffer_size=100000)),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="bc"),
    model=dict(type="qac"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_offline

    serial_pipeline_offline([main_config, create_config], seed=0)
