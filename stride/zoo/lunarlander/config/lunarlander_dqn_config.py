"""DQN on LunarLander-v3: `stride -m serial -e lunarlander -p dqn -s 0` (or `-c` this file).

Needs the Box2D extra: ``pip install -c constraints.txt -e ".[box2d]"``. Gymnasium 1.x dropped v2; v3 is the same task.
Evaluation: a 10-episode screen every 10,000 env steps (an episode lasts up to 1,000 steps, so
screening every 1,000 would cost more than training); a screen at 200 stops the run only if 100
further episodes of that policy reach it too (``confirm_episode``), as benchmarks/learning judges.

Hyper-parameters and their sources:
  * DI-engine's ``dizoo/box2d/lunarlander/config/lunarlander_dqn_config.py``: dueling Q-net with a
    [512, 64] encoder, 3-step double DQN, gamma 0.99, batch 64, lr 1e-3, 10 gradient steps per
    64 collected transitions from 8 envs, target copied every 100 gradient steps, exp eps
    0.95 -> 0.1 (decay 50,000 env steps), replay 100,000.
  * tuned here (benchmarks/learning/README.md): the learning rate decays linearly from 1e-3 to 0 at
    250,000 env steps (the benchmark's budget; DI-engine keeps 1e-3): with a constant rate the greedy
    policy swung by 100-400 between 10,000-step screens, so the first confirmed hit sat near 200 and
    2 of 5 returned policies fell below it on fresh episodes (194.2, 192.5); epsilon over 10,000 env
    steps instead did not fix that (182.7 on seed 0). The in-process ``base`` env manager (a Box2D step
    costs less than the inter-process round trip, and train CPU then counts the env steps), and the
    evaluation rule above.
Measured (2026-11-29, seeds 0-4; tuned on seeds 10-12 only): confirmed 200 at 130k-220k env steps
(median 140,016), 104.7 / 112.0 / 130.9 / 111.4 / 182.2 train CPU s (median 112.0: 0.49x SB3 with
rl-zoo3's LunarLander-v3 entry, 230.9 on a quiet box), fresh 100-episode means 218.1 / 226.6 / 206.9 /
211.0 / 208.8 -- all five hold 200.
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
