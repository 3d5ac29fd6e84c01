"""PPO on Breakout: `stride -m serial_onpolicy -e breakout -p ppo -s 0` (or `-c` this file).

Needs the Atari extra: ``pip install -c constraints.txt -e ".[atari]"``. Env: ``ALE/Breakout-v5`` with the
standard preset (``stride.zoo.atari.make_atari_env``); the return reported is the game score.

Source of the hyper-parameters: rl-baselines3-zoo ``hyperparams/ppo.yml``, entry ``atari`` (the
same as CleanRL's ``ppo_atari.py`` and the PPO paper's Atari table): 8 envs x 128 steps, 4 epochs
of 256-sample minibatches, lr 2.5e-4 annealed linearly to 0 over 1e7 env steps (9,765 collects),
clip 0.1, entropy 0.01, value weight 0.5, gradient norm 0.5, gamma 0.99, GAE lambda 0.95; sticky
actions off as the zoo's ``NoFrameskip-v4`` envs (``repeat_action_probability=0``).
Differences: the clip range stays 0.1 (rl-zoo3 anneals it linearly); Stride's PPO normalises
values and clips the value loss (defaults kept).
"""

import stride.zoo.atari.envs  # noqa: F401  (registers the env type 'atari')

main_config = dict(
    exp_name="breakout_ppo",
    env=dict(
        env_id="ALE/Breakout-v5",
        repeat_action_probability=0.0,
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=8,
        stop_value=400,  # a target of this repository (not a published figure)
    ),
    policy=dict(
        # an image obs_shape: the model template picks the Nature CNN encoder
        model=dict(obs_shape=[4, 84, 84], action_shape=4),
        discount_factor=0.99,
        gae_lambda=0.95,
        learn=dict(
            epoch_per_collect=4,
            batch_size=256,
            learning_rate=2.5e-4,
            lr_anneal_collects=9765,
            clip_ratio=0.1,
            entropy_weight=0.01,
            value_weight=0.5,
            grad_clip_norm=0.5,
            learner=dict(hook=dict(save_ckpt_after_iter=10000)),
        ),
        collect=dict(n_sample=1024),
        eval=dict(evaluator=dict(eval_freq_envstep=100000)),
    ),
)

create_config = dict(
    env=dict(type="atari"),
    env_manager=dict(type="subprocess"),
    policy=dict(type="ppo"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_onpolicy

    serial_pipeline_onpolicy([main_config, create_config], seed=0)
