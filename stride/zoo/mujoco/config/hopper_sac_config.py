"""SAC on Hopper-v5: `stride -m serial -e hopper -p sac -s 0` (or `-c` this file). Needs ``stride-rl[mujoco]``.

Hyper-parameters: Tianshou's MuJoCo SAC benchmark (``examples/mujoco/mujoco_sac.py`` at e605bdea, the
commit its README's SAC table names; Hopper-v3 there, the v5 envs share their dynamics): one env, one
gradient step per env step, batch 256, Adam 1e-3 for actor and critics, a **fixed** temperature
alpha 0.2 (no automatic entropy), tau 0.005, gamma 0.99, 1-step returns, replay 1e6, [256, 256] MLPs,
10,000 random warm-up steps. Tianshou's published curve: 3,388 at its 300k (its benchmark data; 310k env steps
here: its trainer counts from the end of the warm-up; at 300k env steps its ten seeds average 3,165, median
3,422). Tianshou 2.0.1 itself on Hopper-v5 (``benchmarks/curves/tianshou_curve.py``) returned 3,455.2 / 3,429.6
at 300k on seeds 0 / 1 (100 fresh episodes); its SAC update and Stride's agree to float rounding
(``benchmarks/curves/sac_update_vs_tianshou.py``).
Against rl-baselines3-zoo's values (SB3 defaults: Adam 3e-4, alpha learnt towards entropy -|A|), the
shipped ones until issue 32: same network, batch, tau, gamma, warm-up and update ratio; the
differences are the learning rate (1e-3 vs 3e-4) and the temperature (fixed 0.2 vs learnt). With
rl-zoo3's values Hopper passed 2,500 at 150k but oscillated between ~1,000 and ~3,000 afterwards (the
policy at 300k scored 986 on 100 fresh episodes, its best checkpoint 3,090,
``benchmarks/curves/README.md``). The learnt alpha shrinks as the policy narrows; a fixed 0.2 keeps
the entropy bonus, which is what Tianshou's steady curve runs with. CPU per env step: the same
networks and batch, one fewer optimiser step (no temperature update).
The run returns the policy of its best evaluation (``return_best``): each 10-episode screen above the
best so far is confirmed on 100 more episodes and the best confirmation's checkpoint is what it returns.
Measured (issue 32, 2026-12-01, ``benchmarks/curves/README.md``): the policy each run returns at 300k, on
100 fresh episodes, seeds 0 / 1 / 2: **3,391.3 / 3,436.0 / 3,372.4**, median 3,391.3 (100.1 % of 3,388; their
best confirmations, at 290k / 230k / 280k env steps; the last policies score 3,388.5 / 3,356.6 / 3,300.1 on the
same episodes); train CPU 3,511 / 3,548 / 3,914 s, evaluation CPU 320 / 234 / 413 s.
Returning the last policy (2026-11-29/30): 3,388.5 / 3,152.8 / 3,291.0 on seeds 0 / 1 / 2, median 3,291.0,
97 % of Tianshou's 3,388: the fixed temperature and lr 1e-3 keep the policy near its best, but the curve
still swings between ~900 and ~3,400 after 150k and the last policy can be caught in a dip.
Tianshou's learnt temperature (``--auto-alpha``: from 1.0 towards entropy -|A|) was measured too:
1,634.7 / 3,492.1 on seeds 0 / 1, seed 0 at 50 % of its best, so the fixed 0.2 stays.
Evaluation: a 10-episode screen every 10,000 env steps; a passing screen must hold on 100 more.
"""

main_config = dict(
    exp_name="hopper_sac",
    env=dict(
        env_id="Hopper-v5",
        collector_env_num=1,
        evaluator_env_num=5,
        n_evaluator_episode=10,
        stop_value=3000,
    ),
    policy=dict(
        random_collect_size=10000,  # learning_starts
        model=dict(obs_shape=11, action_shape=3, actor_hidden_size_list=[256, 256],
                   critic_hidden_size_list=[256, 256], activation="relu"),
        discount_factor=0.99,
        learn=dict(
            update_per_collect=1,  # gradient_steps
            batch_size=256,
            learning_rate_q=1e-3,  # critic_lr
            learning_rate_policy=1e-3,  # actor_lr
            auto_alpha=False,  # Tianshou's default: a fixed temperature
            alpha=0.2,
            target_theta=0.005,  # tau
            learner=dict(hook=dict(save_ckpt_after_iter=100000)),
        ),
        collect=dict(n_sample=1),  # train_freq 1
        # return_best: the policy of the best evaluation, each new best screen confirmed on 100 episodes
        eval=dict(evaluator=dict(eval_freq_envstep=10000, confirm_episode=100, return_best=True)),
        other=dict(replay_buffer=dict(replay_buffer_size=1000000)),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="sac"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0)
