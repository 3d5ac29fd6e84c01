"""PPO on MinAtar Breakout: `stride -m serial -e minatar_breakout -p ppo -s 0 --env-step 2000000` (or `-c` this file).

Needs the MinAtar extra: ``pip install "stride-rl[minatar]"``. Observations are the game's
(4, 10, 10) 0/1 planes as uint8 (channel-first), encoded by the MinAtar conv net (conv 16 3x3 + FC 128)
shared by the actor and critic, each a single linear layer on top.

Source: CleanRL's Atari PPO (``cleanrl/ppo_atari.py``; Huang et al. 2022, "The 37 Implementation
Details of Proximal Policy Optimization"), used as is on MinAtar: 8 envs x 128 steps, 4 epochs of
4 minibatches (256), Adam lr 2.5e-4 annealed linearly to 0, gamma 0.99, GAE lambda 0.95, clip 0.1
(policy and value), entropy 0.01, value 0.5, gradient norm 0.5, advantages normalised per
minibatch, no value normalisation, advantages computed once per rollout. CleanRL anneals over its
10M-step budget; here over 2M env steps (1,953 rollouts of 1,024), the issue's MinAtar budget.
"""

main_config = dict(
    exp_name="minatar_breakout_ppo",
    env=dict(
        env_id="MinAtar/Breakout-v1",
        collector_env_num=8,
        evaluator_env_num=4,
        n_evaluator_episode=10,
        # no published score to stop at: a run goes for its budget (--env-step 2000000)
        stop_value=1e9,
    ),
    policy=dict(
        model=dict(obs_shape=[4, 10, 10], action_shape=3, encoder="minatar", actor_head_layer_num=0,
                   critic_head_layer_num=0),
        discount_factor=0.99,
        gae_lambda=0.95,
        learn=dict(
            epoch_per_collect=4,
            batch_size=64,
            learning_rate=1e-3,
            lr_anneal_collects=7812,
            recompute_adv=False,
            adv_norm=True,
            value_norm=False,
            clip_ratio=0.1,
            value_clip_ratio=0.1,
            entropy_weight=0.01,
            value_weight=0.5,
            grad_clip_norm=0.5,
            learner=dict(hook=dict(save_ckpt_after_iter=200)),
        ),
        collect=dict(n_sample=256),
        eval=dict(evaluator=dict(eval_freq_envstep=50000)),
    ),
)

create_config = dict(
    env=dict(type="minatar"),
    env_manager=dict(type="base"),
    policy=dict(type="ppo"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_onpolicy

    serial_pipeline_onpolicy([main_config, create_config], seed=0, max_env_step=2_000_000)
