"""PPO on LunarLander-v3 (discrete): `stride -m serial -e lunarlander -p ppo -s 0` (or `-c` this file).

Needs Box2D: ``pip install -c constraints.txt -e '.[box2d]'``. Gymnasium 1.x dropped v2; v3 is the same task.
Evaluation: a 10-episode screen every 10,000 env steps (an episode lasts up to 1,000 steps); a
screen at 200 stops the run only if 100 further episodes of that policy reach it too
(``confirm_episode``), as benchmarks/learning judges, with a margin: their mean less 3 standard
errors (``confirm_std_errors``; issue 32, below).

Hyper-parameters and their sources:
  * rl-zoo3 (2.9.2, ``hyperparams/ppo.yml``, LunarLander-v3): 16 envs x 1,024 steps per collect,
    4 epochs, gamma 0.999, GAE lambda 0.98, entropy 0.01, clip 0.2, gradient norm 0.5, 64-wide tanh
    layers in a separate actor and critic (here each a [64, 64] encoder and a 64-wide head, as this
    config had before).
  * tuned here (sweep in benchmarks/learning/README.md): minibatches of 256 (rl-zoo3: 64) at
    lr 1e-3 (rl-zoo3: 3e-4) -- a quarter of the gradient steps per collect, reaching 200 in about
    as many env steps; the in-process ``base`` env manager (a Box2D step costs less than the
    inter-process round trip, and train CPU then counts the env steps).
  * Stride's PPO defaults (after DI-engine): advantages recomputed each epoch, value normalisation,
    value clipping 0.2.
Measured (benchmarks/learning/README.md, seeds 0-4): 2026-11-25 confirmed at 229k-295k env steps, fresh
100-episode means 210.1 / 218.5 / 227.1 / 204.9 / 208.9; rerun 2026-11-29 at 197k-311k env steps,
fresh 208.0 / 204.1 / 214.4 / 194.4 / 220.8 (4 of 5 hold 200; issue 32, open). Probes on seeds 10-12
(2026-11-29) did not lift that: lr 1e-3 decaying to 0 at 1M or 500k env steps, entropy 0 or 0.003 each
held 1-2 of 3 fresh (this config 3 of 3, two marginal). The first confirmation sits at 200-220 with a
per-episode std of 37-85 (crashes), so the fresh mean moves by -6 +- 16 from it whatever the update
size; the values above stay as measured. With the confirmation's margin of 3 standard errors (chosen on
seeds 10-14: fresh 226-240, 5 of 5), seeds 0-4 (2026-11-29) confirmed at 229k-360k env steps, 62-92 train
CPU s (median 76.3 s, 0.21x SB3 + rl-zoo3's 370 s), fresh 241.4 / 234.9 / 222.6 / 228.9 / 242.2: 5 of 5 hold.
"""

main_config = dict(
    exp_name="lunarlander_ppo",
    env=dict(
        env_id="LunarLander-v3",
        collector_env_num=16,
        evaluator_env_num=8,
        # a 10-episode screen; a passing one must hold on 100 further episodes (confirm_episode)
        n_evaluator_episode=10,
        stop_value=200,
    ),
    policy=dict(
        model=dict(obs_shape=8, action_shape=4, share_encoder=False, encoder_hidden_size_list=[64, 64],
                   actor_head_hidden_size=64, critic_head_hidden_size=64),
        discount_factor=0.999,
        gae_lambda=0.98,
        learn=dict(
            epoch_per_collect=4,
            batch_size=256,
            learning_rate=1e-3,
            entropy_weight=0.01,
            learner=dict(hook=dict(save_ckpt_after_iter=50)),
        ),
        collect=dict(n_sample=16384),
        # the confirmation's mean less 3 standard errors must reach 200: a policy that still crashes
        # now and then (a wide spread) trains on until it clears 200 with room
        eval=dict(evaluator=dict(eval_freq_envstep=10000, confirm_episode=100, confirm_std_errors=3.0)),
    ),
)

create_config = dict(
    env=dict(type="gymnasium"),
    env_manager=dict(type="base"),
    policy=dict(type="ppo"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_onpolicy

    serial_pipeline_onpolicy([main_config, create_config], seed=0)
