"""PPO on MinAtar Space Invaders: `stride -m serial -e minatar_spaceinvaders -p ppo -s 0 --env-step 2000000` (or `-c` this file).

Needs the MinAtar extra: ``pip install -c constraints.txt -e ".[minatar]"``. Observations are the game's
(6, 10, 10) 0/1 planes as uint8 (channel-first), encoded by the MinAtar conv net (conv 16 3x3 + FC 128)
shared by the actor and critic, each a single linear layer on top.

Source: CleanRL's Atari PPO (``cleanrl/ppo_atari.py``; Huang et al. 2022, "The 37 Implementation
Details of Proximal Policy Optimization") -- 4 epochs of 4 minibatches, gamma 0.99, GAE lambda 0.95,
clip 0.1 (policy and value), entropy 0.01, value 0.5, gradient norm 0.5, advantages normalised per
minibatch, no value normalisation, advantages computed once per rollout, lr annealed linearly to 0
(here over 2M env steps: 7,812 rollouts) -- with ``minatar_breakout_ppo``'s shorter rollouts and
larger step: 8 envs x 32 steps (was 128), minibatch 64 (was 256), Adam lr 1e-3 (was 2.5e-4).

Why: the same too-small update per env step as Breakout's (see that config). Measured 2026-11-29,
seed 10, sticky actions 0.1, greedy 10-episode evaluation at 100k env steps: 6.8 with CleanRL's values
(policy entropy still 1.06 of ln 4 = 1.39, approx KL 0.0009 per rollout), 32.8 with these (entropy
0.60, KL 0.005); at 200k, 19.5 vs 37.1; final policies at 300k, 100 fresh episodes: 22.89 +- 12.78 vs
28.89 +- 13.38 (train CPU 152 vs 212 s). Not measured further (no 2M run yet).
"""

main_config = dict(
    exp_name="minatar_spaceinvaders_ppo",
    env=dict(
        env_id="MinAtar/SpaceInvaders-v1",
        collector_env_num=8,
        evaluator_env_num=4,
        n_evaluator_episode=10,
        # no published score to stop at: a run goes for its budget (--env-step 2000000)
        stop_value=1e9,
    ),
    policy=dict(
        model=dict(obs_shape=[6, 10, 10], action_shape=4, encoder="minatar", actor_head_layer_num=0,
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
