"""PPO on MiniGrid-Empty-8x8-v0: `stride -m serial -e empty -p ppo -s 0` (or `-c` this file).

Needs MiniGrid: ``pip install -c constraints.txt -e ".[minigrid]"``. An empty 8x8 room (6x6 inside): reach the
goal square; the reward on success is ``1 - 0.9 * steps / 256``, else 0.
Observation: ``obs_type='flat'`` (one-hot object / colour / state of the 7x7 partial view plus the
direction: 984 floats) with the MLP model, until a conv encoder for ``'image'`` lands in
``stride.model.common``.
Hyper-parameters: rl-baselines3-zoo's MiniGrid PPO entries (``MiniGrid-DoorKey-5x5-v0``; its
``MiniGrid-FourRooms-v0`` entry differs in 512 steps per env and 4e6 steps; hyperparams/ppo.yml,
"following lcswillems/rl-starter-files"): 8 envs x 128 steps, 10 epochs of 64-sample minibatches,
lr 2.5e-4, gamma 0.99, GAE lambda 0.95, clip 0.2, no entropy bonus, SB3's default 64-64 MLP with
separate actor and critic, 1e5 env steps. Not carried over: rl-zoo3's ``normalize: true``
(VecNormalize of observations and rewards; the one-hot observation is already in [0, 1]).
Stop value 0.9: the mean return of an agent that reaches the goal in about 25 steps or fewer
(the shortest path is 11 steps).
"""

main_config = dict(
    exp_name="empty_ppo",
    env=dict(
        env_id="MiniGrid-Empty-8x8-v0",
        obs_type="flat",
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=16,
        stop_value=0.9,
    ),
    policy=dict(
        model=dict(obs_shape=984, action_shape=7, share_encoder=False, encoder_hidden_size_list=[64, 64],
                   actor_head_hidden_size=64, critic_head_hidden_size=64),
        discount_factor=0.99,
        gae_lambda=0.95,
        learn=dict(
            epoch_per_collect=10,
            batch_size=64,
            learning_rate=2.5e-4,
            clip_ratio=0.2,
            entropy_weight=0.0,
            learner=dict(hook=dict(save_ckpt_after_iter=500)),
        ),
        collect=dict(n_sample=1024),
        # a 16-episode screen every 10 k env steps; a passing one must hold on 100 further episodes
        eval=dict(evaluator=dict(eval_freq_envstep=10_000, confirm_episode=100)),
    ),
)

create_config = dict(
    env=dict(type="minigrid"),
    env_manager=dict(type="base"),
    policy=dict(type="ppo"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_onpolicy

    serial_pipeline_onpolicy([main_config, create_config], seed=0)
