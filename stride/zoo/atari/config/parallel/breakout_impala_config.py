"""IMPALA on Breakout on the parallel pipeline: `stride -m parallel -c <this file> -s 0`.

Needs the Atari extra (``pip install -c constraints.txt -e ".[atari]"``) and Ray (``stride-rl[dist]``). Env:
``ALE/Breakout-v5`` with the standard preset (``stride.zoo.atari.make_atari_env``, sticky actions
off), as the serial Atari configs; the Nature CNN encoder (picked from the image ``obs_shape``).

Source of the hyper-parameters: the IMPALA paper's Atari settings (Espeholt et al., 2018, the
shallow network's): unrolls of 20 steps, 32 unrolls per gradient step, discount 0.99,
baseline cost 0.5, entropy cost 0.01, gradient norm clipped at 40, RMSProp with lr 6e-4 annealed linearly to 0 (here over 1e7 env steps, the PPO config's budget), rewards
clipped by the preset. Differences: Stride's IMPALA takes each unroll from a replay
of 1,000 unrolls, each used at most twice (the paper: a queue, each used once; one reuse keeps the
learner busy while the collectors catch up, v-trace corrects the lag); 2 collectors x 8 envs (the
paper: 48-200 actors). Every batch of 16 unrolls a collector sends is followed by one step of 32.
"""

import stride.zoo.atari.envs  # noqa: F401  (registers the env type 'atari')

main_config = dict(
    exp_name="breakout_impala_parallel",
    env=dict(
        env_id="ALE/Breakout-v5",
        repeat_action_probability=0.0,
        collector_env_num=8,  # per collector actor
        evaluator_env_num=8,
        n_evaluator_episode=8,
        stop_value=400,  # a target of this repository (not a published figure)
    ),
    policy=dict(
        model=dict(obs_shape=[4, 84, 84], action_shape=4),
        discount_factor=0.99,
        lambda_=1.0,  # the paper's v-trace
        learn=dict(
            update_per_collect=1,
            batch_size=32,
            optimizer="rmsprop",
            # 1e7 env steps / 320 env steps per step = 31,250 gradient steps
            learning_rate=dict(type="linear", start=6e-4, end=0.0, steps=31250),
            value_weight=0.5,
            entropy_weight=0.01,
            grad_clip_norm=40.0,
            learner=dict(hook=dict(save_ckpt_after_iter=10000)),
        ),
        collect=dict(n_sample=16, unroll_len=20),
        eval=dict(evaluator=dict(eval_freq_envstep=100000)),
        other=dict(replay_buffer=dict(replay_buffer_size=1000, max_use=2, priority=False)),
    ),
)

create_config = dict(
    env=dict(type="atari"),
    env_manager=dict(type="subprocess"),
    policy=dict(type="impala"),
    replay_buffer=dict(type="advanced"),
)

system_config = dict(
    collector_num=2,
    learner_num=1,
    collector_cpus=0.5,
    learner_cpus=0.5,
    replay_cpus=0.0,
    replay_snapshot_freq=500,
)

if __name__ == "__main__":
    from stride.entry import parallel_pipeline

    parallel_pipeline([main_config, create_config, system_config], seed=0)
