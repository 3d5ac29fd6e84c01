"""PPO on MPE simple spread (3 agents, cooperative): `stride -m serial_onpolicy -e simple_spread -p ppo -s 0` (or `-c` this file).

Needs PettingZoo's MPE: ``pip install -c constraints.txt -e ".[multiagent]"`` (``mpe2``). Each of the 3 agents
sees an 18-float vector and picks one of 5 moves; agents are rewarded for covering the 3 landmarks
and penalised for collisions; an episode is truncated after 25 steps (``max_cycles``), so TD
targets bootstrap at its end. The three agents are parameter-shared independent learners (IPPO):
each agent's transitions are a stream of their own (``MultiAgentManager``), one actor-critic
learns from all of them; an agent's return is its own reward summed (the evaluator reports the
mean over agents). Env steps count agent transitions: 3 per env step.

Source: Yu et al. (2022), "The Surprising Effectiveness of PPO in Cooperative Multi-Agent Games",
MPE hyper-parameters (their Tables on MPE: lr 7e-4, gamma 0.99, GAE lambda 0.95, clip 0.2, 10 PPO
epochs, 1 minibatch per collect, entropy 0.01, 64-unit hidden layers, episode length 25) with
their IPPO variant (critic on the agent's own observation). Differences: 8 envs (24 agent streams)
x 100 steps per collect in place of 128 rollout threads (a CPU budget), so 6 minibatches of 400 per
epoch in place of one: with one minibatch of 2,400, 600 k agent steps (10 gradient steps per
collect) left the sampled return where it started (-23.9, seed 0, 2026-11-25); no recurrent layer,
no PopArt (Stride's PPO normalises values by running return statistics).
No published number to stop at: a run goes for its budget (``--env-step``).
"""

main_config = dict(
    exp_name="simple_spread_ppo",
    env=dict(
        env_id="mpe2.simple_spread_v3",
        env_kwargs=dict(N=3, local_ratio=0.5, max_cycles=25, continuous_actions=False),
        collector_env_num=8,
        evaluator_env_num=4,
        # a multiple of the 3 agents: the agents of one env share its episodes' quota
        n_evaluator_episode=12,
        stop_value=1e9,
    ),
    policy=dict(
        model=dict(obs_shape=18, action_shape=5, encoder_hidden_size_list=[64, 64], actor_head_hidden_size=64,
                   critic_head_hidden_size=64),
        discount_factor=0.99,
        gae_lambda=0.95,
        learn=dict(
            epoch_per_collect=10,
            batch_size=400,
            learning_rate=7e-4,
            clip_ratio=0.2,
            entropy_weight=0.01,
            learner=dict(hook=dict(save_ckpt_after_iter=100)),
        ),
        collect=dict(n_sample=2400),
        eval=dict(evaluator=dict(eval_freq_envstep=24_000)),
    ),
)

create_config = dict(
    env=dict(type="pettingzoo"),
    env_manager=dict(type="base"),
    policy=dict(type="ppo"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline_onpolicy

    serial_pipeline_onpolicy([main_config, create_config], seed=0, max_env_step=1_000_000)
