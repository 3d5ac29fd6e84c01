"""IMPALA on MinAtar Breakout: `stride -m serial -e minatar_breakout -p impala -s 0 --env-step 2000000` (or `-c` this file).

Needs the MinAtar extra: ``pip install -c constraints.txt -e ".[minatar]"``. Observations are the game's
(4, 10, 10) 0/1 planes as uint8 (channel-first), encoded by the MinAtar conv net (conv 16 3x3 + FC 128)
shared by the actor and critic, each a single linear layer on top.

Source: the fixed Atari settings of Espeholt et al. (2018, appendix) -- unrolls of 20 steps,
batches of 32 unrolls, baseline (value) weight 0.5, entropy 0.01, gamma 0.99, v-trace with
lambda 1 and both clips at 1, RMSProp (decay 0.99, no momentum) at lr 6e-4, gradient-norm clip 40
-- on DI-engine's serial IMPALA layout: a replay buffer of unrolls each used at most ``max_use``
times (here 4: 8 new unrolls per collect, 32 per gradient step). RMSProp's eps is 1e-5, not the
paper's 0.01: the paper sums the loss over batch and time, Stride averages it (with eps 0.01 the
updates were ~600x too small: seed 0 still at a 0.8 return after 150k env steps). MinAtar rewards
are already 0/1, so no reward clipping. Not tuned on MinAtar; one short run (seed 0, 150k env steps,
2026-11-25, loaded 2-core box): training episodes' mean return 0.4 -> 4.5, 34 CPU s in all
(Stride's PPO config: ~4.9 at 250k). No published score to stop at: a run goes for its budget.
"""

main_config = dict(
    exp_name="minatar_breakout_impala",
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
        lambda_=1.0,
        learn=dict(
            update_per_collect=1,
            batch_size=32,
            optimizer="rmsprop",
            learning_rate=6e-4,
            value_weight=0.5,
            entropy_weight=0.01,
            rho_clip=1.0,
            c_clip=1.0,
            rho_pg_clip=1.0,
            grad_clip_norm=40.0,
            learner=dict(hook=dict(save_ckpt_after_iter=1000)),
        ),
        collect=dict(n_sample=8, unroll_len=20),
        eval=dict(evaluator=dict(eval_freq_envstep=50000)),
        other=dict(replay_buffer=dict(replay_buffer_size=1000, max_use=4, priority=False)),
    ),
)

create_config = dict(
    env=dict(type="minatar"),
    env_manager=dict(type="base"),
    policy=dict(type="impala"),
    replay_buffer=dict(type="advanced"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0, max_env_step=2_000_000)
