"""SAC + HER on FetchReach-v4: `stride -m serial -e fetchreach -p sac_her -s 0` (or `-c` this file).
Needs ``stride-rl[robotics]``.

Hyper-parameters: rl-baselines3-zoo's ``hyperparams/her.yml``, ``FetchReach-v1`` (SAC): HER 'future'
goals, 4 relabelled per original (``n_sampled_goal=4``), batch 256, gamma 0.95, Adam 1e-3 for critics,
actor and temperature (automatic entropy), replay of 1e6 transitions (20,000 episodes of 50 steps),
1,000 uniformly random warm-up steps (``learning_starts``), one gradient step per env step, and
SB3's SAC defaults otherwise ([256, 256] MLPs, twin critics, tau 0.005); 20,000 env steps in the zoo.
Not taken: ``normalize: True`` (VecNormalize of the observation; Stride's ``obs_norm`` reads plain
Box observations only) -- FetchReach learns without it. Stride's own choices: the collector gathers
one whole episode (50 steps) and the learner then takes 50 gradient steps; HER draws 16 transitions
from each of 16 sampled episodes per batch (so training starts after the 20 warm-up episodes, as at
``learning_starts=1000``). The network reads ``[observation, desired_goal]`` (13 inputs).
Score: success (the last step's ``is_success``); stop at 0.9 on a 20-episode screen every 2,000 env
steps, confirmed on 100 further episodes.
"""

main_config = dict(
    exp_name="fetchreach_sac_her",
    env=dict(
        env_id="FetchReach-v4",
        collector_env_num=1,
        evaluator_env_num=4,
        n_evaluator_episode=20,
        stop_value=0.9,
    ),
    policy=dict(
        random_collect_size=1000,  # learning_starts
        model=dict(obs_shape=13, action_shape=4, actor_hidden_size_list=[256, 256],
                   critic_hidden_size_list=[256, 256]),
        discount_factor=0.95,
        learn=dict(
            update_per_collect=50,  # one gradient step per env step (one 50-step episode per collect)
            batch_size=256,
            learning_rate_q=1e-3,
            learning_rate_policy=1e-3,
            learning_rate_alpha=1e-3,
            target_theta=0.005,
            learner=dict(hook=dict(save_ckpt_after_iter=10000)),
        ),
        collect=dict(n_episode=1),
        eval=dict(evaluator=dict(eval_freq_envstep=2000, confirm_episode=100, metric="success")),
        other=dict(replay_buffer=dict(replay_buffer_size=20000)),  # episodes: 1e6 transitions
    ),
    reward_model=dict(her_strategy="future", her_replay_k=4, sample_per_episode=16),
)

create_config = dict(
    env=dict(type="fetch"),
    env_manager=dict(type="base"),
    policy=dict(type="sac"),
    collector=dict(type="episode"),
    replay_buffer=dict(type="episode"),
    reward_model=dict(type="her"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_reward_model

    serial_pipeline_reward_model([main_config, create_config], seed=0)
