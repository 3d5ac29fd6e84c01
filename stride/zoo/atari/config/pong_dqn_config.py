"""DQN on Pong: `stride -m serial -e pong -p dqn -s 0` (or `-c` this file).

Needs the Atari extra: ``pip install -c constraints.txt -e ".[atari]"``. Env: ``ALE/Pong-v5`` with the standard
preset (``stride.zoo.atari.make_atari_env``: 30 no-ops, frame skip 4 with max-pooling, episodic life
in training, fire reset, 84x84 gray, 4 frames, clipped rewards; the return reported is the score).

Source of the hyper-parameters: rl-baselines3-zoo ``hyperparams/dqn.yml``, entry ``atari``
(buffer 1e5, lr 1e-4, batch 32, learning_starts 1e5, target_update_interval 1e3 env steps,
train_freq 4 with 1 gradient step, exploration 1.0 -> 0.01 over 10 % of 1e7 steps, Huber loss and
gradient norm 10 as SB3's DQN, gamma 0.99), with v5's sticky actions kept off as the zoo's
``NoFrameskip-v4`` envs have them (``repeat_action_probability=0``).
Translation: 8 envs x 4 steps per collect and 8 gradient steps (one per 4 env steps, as
train_freq 4); the target copy every 250 gradient steps (= 1,000 env steps).
"""

import stride.zoo.atari.envs  # noqa: F401  (registers the env type 'atari')

main_config = dict(
    exp_name="pong_dqn",
    env=dict(
        env_id="ALE/Pong-v5",
        repeat_action_probability=0.0,
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=8,
        stop_value=20,  # of 21: a target of this repository (not a published figure)
    ),
    policy=dict(
        # an image obs_shape: the model template picks the Nature CNN encoder
        model=dict(obs_shape=[4, 84, 84], action_shape=6, dueling=False),
        discount_factor=0.99,
        nstep=1,
        random_collect_size=100000,
        learn=dict(
            update_per_collect=8,
            batch_size=32,
            learning_rate=1e-4,
            target_update_freq=250,
            loss_type="huber",
            grad_clip_norm=10.0,
            learner=dict(hook=dict(save_ckpt_after_iter=100000)),
        ),
        collect=dict(n_sample=32),
        eval=dict(evaluator=dict(eval_freq_envstep=100000)),
        other=dict(
            eps=dict(type="linear", start=1.0, end=0.01, decay=1000000),
            # frame_stack=4: each 84x84 frame stored once (~7.6 KB per transition instead of ~56 KB)
            replay_buffer=dict(replay_buffer_size=100000, frame_stack=4),
        ),
    ),
)

create_config = dict(
    env=dict(type="atari"),
    env_manager=dict(type="subprocess"),
    policy=dict(type="dqn"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
