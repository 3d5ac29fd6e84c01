"""DQN on MinAtar Space Invaders: `stride -m serial -e minatar_spaceinvaders -p dqn -s 0 --env-step 5000000` (or `-c` this file).

Needs the MinAtar extra: ``pip install -c constraints.txt -e ".[minatar]"``. Observations are the game's
(6, 10, 10) 0/1 planes as uint8 (channel-first), encoded by the MinAtar conv net (conv 16 3x3 + FC 128).

Source: Young & Tian (2019), "MinAtar: An Atari-Inspired Testbed for Thorough and Reproducible
Reinforcement Learning Experiments", DQN setting (and the MinAtar repository's examples/dqn.py):
learning rate 2.5e-4, batch 32, replay 100k, replay start 5,000, target network copied every 1,000
frames, one update per frame, epsilon 1 -> 0.1 linearly over the first 100k frames, gamma 0.99,
Huber (smooth L1) loss, 5M frames. Differences: Stride's DQN uses Adam (the paper: centred RMSprop,
alpha 0.95, eps 0.01) and double-Q targets; 4 envs collect 4 frames per 4 updates (still one update
per frame, so the target copy every 1,000 learner steps is every 1,000 frames).
Measured (issue 32, 2026-11-30, ``benchmarks/curves/README.md``): the policy a run returns at 1M env
steps, on 100 fresh episodes, seed 0: **57.88 +- 39.60** (best 10-episode screen 62.1 at 850k, so 93 % of
it); train CPU 5,770 s (sharing 2 cores). On the same 100 episodes, seed 0: MinAtar's own ``dqn.py`` at 1M,
its final network 34.99 +- 26.91 (it logged 28.12, an epsilon-greedy training average; 7,613 CPU s);
SB3's DQN on these values 39.72 +- 29.55 (6,193 train CPU s, so Stride 0.93x; Breakout: 0.67x).
"""

main_config = dict(
    exp_name="minatar_spaceinvaders_dqn",
    env=dict(
        env_id="MinAtar/SpaceInvaders-v1",
        collector_env_num=4,
        evaluator_env_num=4,
        n_evaluator_episode=10,
        # no published score to stop at: a run goes for the paper's budget (--env-step 5000000)
        stop_value=1e9,
    ),
    policy=dict(
        # conv 16 3x3 s1 -> FC 128 -> Q values, as in the paper (no dueling, no hidden head layer)
        model=dict(obs_shape=[6, 10, 10], action_shape=4, encoder="minatar", dueling=False, head_layer_num=0),
        discount_factor=0.99,
        nstep=1,
        random_collect_size=5000,
        learn=dict(
            update_per_collect=4,
            batch_size=32,
            learning_rate=2.5e-4,
            target_update_freq=1000,
            loss_type="huber",
            learner=dict(hook=dict(save_ckpt_after_iter=100000)),
        ),
        collect=dict(n_sample=4),
        eval=dict(evaluator=dict(eval_freq_envstep=50000)),
        other=dict(
            eps=dict(type="linear", start=1.0, end=0.1, decay=100000),
            replay_buffer=dict(replay_buffer_size=100000),
        ),
    ),
)

create_config = dict(
    env=dict(type="minatar"),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0, max_env_step=5_000_000)
