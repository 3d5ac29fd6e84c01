"""DQN on LunarLander-v3: `stride -m serial -e lunarlander -p dqn -s 0` (or `-c` this file).

Needs the Box2D extra: ``pip install "stride-rl[box2d]"``. Gymnasium 1.x dropped v2; v3 is the same task.
Evaluation: a 10-episode screen every 10,000 env steps (an episode lasts up to 1,000 steps, so
screening every 1,000 would cost more than training); a screen at 200 stops the run only if 100
further episodes of that policy reach it too (``confirm_episode``), as benchmarks/learning judges.

Hyper-parameters and their sources:
  * DI-engine's ``dizoo/box2d/lunarlander/config/lunarlander_dqn_config.py``: dueling Q-net with a
    [512, 64] encoder, 3-step double DQN, gamma 0.99, batch 64, lr 1e-3, 10 gradient steps per
    64 collected transitions from 8 envs, target copied every 100 gradient steps, exp eps
    0.95 -> 0.1 (decay 50,000 env steps), replay 100,000.
  * tuned here (benchmarks/learning/README.md): the in-process ``base`` env manager (a Box2D step
    costs less than the inter-process round trip, and train CPU then counts the env steps), and the
    evaluation rule above.
Against Stable-Baselines3 with rl-zoo3's LunarLander-v3 entry (one 256x256 gradient step of 128
samples per env step), this config spends ~6x fewer gradient steps per env step and confirms 200
on less train CPU: benchmarks/learning/README.md has the per-seed table.
Measured there (seeds 0-4, 2026-11-25): confirmed at 120k-160k env steps, 57-76 train CPU s, fresh
100-episode means 209.8 / 194.2 / 192.5 / 217.5 / 238.8 -- two below 200 (issue 32, open): the greedy
policy swings by 100-400 between 10,000-step screens (2026-11-29 curves), so a confirmed hit sits near
200. Epsilon over 10,000 env steps instead did not fix it: fresh 182.7 / 214.3 / 222.8 / 216.0 / 233.4.
"""

main_config = dict(
    exp_name="lunarlander_dqn",
    env=dict(
        env_id="LunarLander-v3",
        collector_env_num=8,
        evaluator_env_num=8,
        # a 10-episode screen; a passing one must hold on 100 further episodes (confirm_episode)
        n_evaluator_episode=10,
        stop_value=200,
    ),
    policy=dict(
        model=dict(obs_shape=8, action_shape=4, encoder_hidden_size_list=[512, 64], dueling=True),
        discount_factor=0.99,
        nstep=3,
        learn=dict(
            update_per_collect=10,
            batch_size=64,
            # 1e-3 decaying linearly to 0 at 250,000 env steps (the benchmark's budget): later snapshots
            # differ less, so a confirmed hit is not a lucky one among swinging policies
            learning_rate=dict(type="linear", start=1e-3, end=0.0, steps=250000, unit="env_step"),
            target_update_freq=100,
            learner=dict(hook=dict(save_ckpt_after_iter=10000)),
        ),
        collect=dict(n_sample=64),
        eval=dict(evaluator=dict(eval_freq_envstep=10000, confirm_episode=100)),
        other=dict(
            eps=dict(type="exp", start=0.95, end=0.1, decay=50000),
            replay_buffer=dict(replay_buffer_size=100000),
        ),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
