"""PPO on MinAtar Breakout: `stride -m serial -e minatar_breakout -p ppo -s 0 --env-step 2000000` (or `-c` this file).

Needs the MinAtar extra: ``pip install -c constraints.txt -e ".[minatar]"``. Observations are the game's
(4, 10, 10) 0/1 planes as uint8 (channel-first), encoded by the MinAtar conv net (conv 16 3x3 + FC 128)
shared by the actor and critic, each a single linear layer on top.

Source: CleanRL's Atari PPO (``cleanrl/ppo_atari.py``; Huang et al. 2022, "The 37 Implementation
Details of Proximal Policy Optimization") -- 4 epochs of 4 minibatches, gamma 0.99, GAE lambda 0.95,
clip 0.1 (policy and value), entropy 0.01, value 0.5, gradient norm 0.5, advantages normalised per
minibatch, no value normalisation, advantages computed once per rollout, lr annealed linearly to 0
(here over 2M env steps, the issue's MinAtar budget: 7,812 rollouts) -- with shorter rollouts and a
larger step: 8 envs x 32 steps (was 128), minibatch 64 (was 256), Adam lr 1e-3 (was 2.5e-4). That is
4x the optimiser steps per env step, each 4x larger: on the order of the one update per frame of
MinAtar's own online AC(lambda) (``examples/AC_lambda.py``: step 2^-8 every frame), where CleanRL's
values make 31k optimiser steps in 2M env steps.

Why (measured 2026-11-29, seed 10, sticky actions 0.1; ``benchmarks/curves/README.md``): with CleanRL's
values the policy settles by ~300k env steps on a paddle that oscillates in the centre columns
whatever the ball does -- it catches the first six balls of every episode and no more (greedy play
without sticky actions, both starting sides: 6.00 +- 0.00 over 30 episodes at 500k; 5.80 +- 1.04 on
the harness's 100 fresh episodes) while its entropy falls (1.10 -> 0.28). Not sticky actions (the
same 6 without them),
not greedy evaluation (sampling: 5.67), not a bug (no truncation in the game to bootstrap; advantages
normalised per minibatch; MinAtar's network); the update size: 4x the lr alone (6.33 at 500k) or 4x
the steps alone (5.37 at 500k) stays on the plateau, both together leave it by 200k (greedy, 30
episodes with sticky actions: 9.97 +- 6.41 at 200k, 9.87 +- 5.91 at 300k; its 10-episode evaluation at
400k: 13.2; its 100 fresh episodes at 500k: 11.75 +- 5.92; the scripted player: 11.2 +- 10.0). Train CPU
per env step: ~1.65x CleanRL's values' (335 vs 203 s at 500k).
At 2M env steps (2026-11-29, ``benchmarks/curves/README.md``, run 4), the policy at the budget on 100
fresh episodes: seeds 0 / 1 / 2 **19.21 / 20.89 / 23.72** (median 20.89; best 10-episode evaluations 17.9 /
21.9 / 29.9), 1,178-1,183 train CPU s each; SB3 2.9.2 with the same values, seed 0: 20.28 at 1,350 train
CPU s (Stride 0.87x).
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
