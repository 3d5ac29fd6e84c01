"""Self-play DQN on tic-tac-toe with a league: `stride -m league -c` this file `-s 0`.

Needs ``pip install "stride-rl[multiagent,league]"``. The main player (one DQN, both seats) meets
per episode, as ``league.branch_probs`` draws: a frozen snapshot of itself or a fixed opponent
(``random``, ``win_block``: win if possible, else block) picked by PFSP (``'squared'``: the hardest
first), one of them uniformly, or itself (plain self-play, both seats learning) -- in a random
seat. Training against ``win_block`` and its own snapshots is what teaches it to block and fork;
the uniform branch keeps random play in its diet. A snapshot every 2,000-4,000 train iterations
(DI-engine's rule); after each, 100 games per opponent and seat; the run stops once it loses none
of them and wins >= 90 % against random in each seat (perfect play: 99.5 % first, 91.6 % second).

The learner's settings follow ``tictactoe_dqn_config`` (Tianshou's tic-tac-toe DQN: gamma 0.9,
3-step returns, target copy every 320 updates, replay 20,000, batch 64, MLP 128 x 4) with lr 1e-3
and one update per 10-step collect; epsilon 0.2 -> 0.05 over the first 20,000 steps.
"""

main_config = dict(
    exp_name="tictactoe_league",
    env=dict(
        env_id="pettingzoo.classic.tictactoe_v3",
        collector_env_num=8,
        evaluator_env_num=1,
        n_evaluator_episode=2,
        stop_value=1.0,  # unused: the league's own evaluation decides when to stop
    ),
    policy=dict(
        model=dict(obs_shape=[3, 3, 2], action_shape=9, encoder="mlp", encoder_hidden_size_list=[128, 128, 128, 128],
                   dueling=False, head_layer_num=0),
        discount_factor=0.9,
        nstep=3,
        random_collect_size=640,
        learn=dict(
            update_per_collect=1,
            batch_size=64,
            learning_rate=1e-3,
            target_update_freq=320,
            learner=dict(hook=dict(save_ckpt_after_iter=2000)),
        ),
        collect=dict(n_sample=10),
        other=dict(
            eps=dict(type="linear", start=0.2, end=0.05, decay=20000),
            replay_buffer=dict(replay_buffer_size=20000),
        ),
    ),
    league=dict(
        branch_probs=dict(pfsp=0.5, uniform=0.2, sp=0.3),
        pfsp_weighting="squared",
        fixed_opponents=["random", "win_block"],
        snapshot_every=2000,
        strong_win_rate=0.7,
        eval_episode=100,
        eval_opponents=["random", "win_block"],
        stop_max_loss_rate=0.0,
        stop_win_rate=dict(random=0.9),
    ),
)

create_config = dict(
    env=dict(type="pettingzoo"),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
    replay_buffer=dict(type="naive"),
    league=dict(type="one_vs_one"),
)

if __name__ == "__main__":
    from stride.entry import league_pipeline

    league_pipeline([main_config, create_config], seed=0, max_env_step=200_000)
