"""PPO on Hopper-v5: `stride -m serial -e hopper -p ppo -s 0` (or `-c` this file). Needs ``stride-rl[mujoco]``.

Hyper-parameters: rl-baselines3-zoo's hyperparams/ppo.yml, Hopper-v4 (tuned values for the v4 envs):
``normalize: true`` -> observations normalised with running statistics, clipped at 10
(``policy.obs_norm``; the statistics are saved in the model's state_dict, so checkpoints and
evaluation use them). VecNormalize's reward normalisation has no counterpart; Stride's PPO
normalises the critic's returns instead (``learn.value_norm``, on by default). One env,
n_steps 512, batch 32, n_epochs 5, gamma 0.999, gae_lambda 0.99, lr 9.80828e-05, clip 0.2,
ent_coef 0.00229519, vf_coef 0.835671, max_grad_norm 0.7, no value clipping; policy_kwargs: log_std_init -2
(sigma_init = e^-2), ortho_init False, ReLU, separate pi/vf [256, 256] MLPs. 1 M env steps in the zoo.
Evaluation: a 10-episode screen every 10,000 env steps; a passing screen must hold on 100 more.
"""

main_config = dict(
    exp_name="hopper_ppo",
    env=dict(
        env_id="Hopper-v5",
        collector_env_num=1,
        evaluator_env_num=5,
        n_evaluator_episode=10,
        stop_value=3000,
    ),
    policy=dict(
        obs_norm=True,  # normalize: true (clip_obs 10)
        obs_norm_clip=10.0,
        # pi/vf [256, 256]: a 256 encoder layer then a 256 head layer, not shared
        model=dict(obs_shape=11, action_shape=3, action_space="continuous", share_encoder=False,
                   encoder_hidden_size_list=[256], actor_head_hidden_size=256, critic_head_hidden_size=256,
                   activation="relu", sigma_init=0.1353352832366127),
        discount_factor=0.999,
        gae_lambda=0.99,
        learn=dict(
            epoch_per_collect=5,
            batch_size=32,
            learning_rate=9.80828e-05,
            clip_ratio=0.2,
            entropy_weight=0.00229519,
            value_weight=0.835671,
            grad_clip_norm=0.7,
            value_clip_ratio=None,
            learner=dict(hook=dict(save_ckpt_after_iter=200)),
        ),
        collect=dict(n_sample=512),
        eval=dict(evaluator=dict(eval_freq_envstep=10000, confirm_episode=100)),
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
