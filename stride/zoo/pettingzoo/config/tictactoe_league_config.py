"""Self-play DQN on tic-tac-toe with a league: `stride -m league -c` this file `-s 0`.

Needs ``pip install -c constraints.txt -e ".[multiagent,league]"``. The main player (one DQN, both seats) meets
per episode, as ``league.branch_probs`` draws: a frozen snapshot of itself or a fixed opponent
(``random``, ``win_block``: win if possible, else block) picked by PFSP (``'squared'``: the hardest
first, 20 %), one of the fixed opponents (50 %), or itself (plain self-play, both seats learning,
30 %) -- in a random seat. Training against ``win_block`` is what teaches it to block and to avoid
the positions where a forced block gives the other player a fork (the last mistake to go: answering
opposite corners with a corner as second player); ``random`` reaches positions self-play never
does. Every training game -- against any opponent, self-play too -- starts after 0, 1 or 2
uniformly random moves (``env.opening_plies=2``; the evaluation's games always start empty): the
main player's Q-values are expected returns against the mix it meets, so a reply that loses only to
an opponent who first played an odd move and then punishes it (X takes an edge, O answers in the
far corner, X forks two moves later) scores about as well as the safe reply unless some game plays
both halves; from random openings its own greedy self-play is that opponent, in every early position.

A snapshot every 1,000-2,000 train iterations (DI-engine's rule); after each, 500 games per
opponent and seat; once those meet the stop rule -- no loss, and against random >= 97 % wins as
first and >= 80 % as second player (``stop_win_rate`` per seat; perfect play: 99.5 % / 91.6 %) --
2,000 more per opponent and seat must meet it too (``league.confirm_episode``: a player that loses
one game in 300 passes a 500-game screen one time in five, and did), else the run goes on. A run
that reaches its env-step limit instead returns the main player of its best evaluation
(``league.return_best``). On seeds 0-4 every run stopped by the rule within 200k env steps with a
player that has no losing line at all, in either seat (``benchmarks/league/README.md``; exact,
``stride.testing.board_games.losing_lines``).

A main exploiter (``league.main_exploiter.use=True``, AlphaStar's) trains beside it against its
newest snapshot only, and its snapshots join the pool. Measured on seeds 0-4 before the random
openings it did not help (the 100-game must-hold on 2 of 5 seeds with it and without, median exact
loss rate to the lookahead as second player 0.95 % both ways) at 2.3-2.9x the train CPU -- so it is
off here.

The learner's settings start from ``tictactoe_dqn_config`` (Tianshou's tic-tac-toe DQN: gamma 0.9,
3-step returns, MLP 128 x 4) with lr 5e-4, batch 128, 2 updates per 10-step collect, target copy
every 500 updates, replay 50,000 and epsilon 0.2 -> 0.05 over the first 20,000 steps (tried on seed
0: 1 update per collect at lr 1e-3 still lost 8 % as second player to the lookahead at 200k steps).
"""

main_config = dict(
    exp_name="tictactoe_league",
    env=dict(
        env_id="pettingzoo.classic.tictactoe_v3",
        collector_env_num=8,
        evaluator_env_num=1,
        n_evaluator_episode=2,
        stop_value=1.0,  # unused: the league's own evaluation decides when to stop
        # each training game starts after 0-2 random moves (the evaluation's games never do)
        opening_plies=2,
    ),
    policy=dict(
        model=dict(obs_shape=[3, 3, 2], action_shape=9, encoder="mlp", encoder_hidden_size_list=[128, 128, 128, 128],
                   dueling=False, head_layer_num=0),
        discount_factor=0.9,
        nstep=3,
        random_collect_size=640,
        learn=dict(
            update_per_collect=2,
            batch_size=128,
            learning_rate=5e-4,
            target_update_freq=500,
            learner=dict(hook=dict(save_ckpt_after_iter=2000)),
        ),
        collect=dict(n_sample=10),
        other=dict(
            eps=dict(type="linear", start=0.2, end=0.05, decay=20000),
            replay_buffer=dict(replay_buffer_size=50000),
        ),
    ),
    league=dict(
        branch_probs=dict(pfsp=0.2, uniform=0.0, fixed=0.5, sp=0.3),
        pfsp_weighting="squared",
        fixed_opponents=["random", "win_block"],
        snapshot_every=1000,
        strong_win_rate=0.7,
        eval_episode=500,
        eval_opponents=["random", "win_block"],
        stop_max_loss_rate=0.0,
        stop_win_rate=dict(random=[0.97, 0.8]),
        confirm_episode=2000,
        return_best=True,
        # (off; see the docstring) a main exploiter plays the main player's newest snapshot only; snapshot
        # (and reset) after 1,000-2,000 of its updates, sooner once it scores 0.6 against it (draws count
        # half, so 0.6 means it wins >= 40 % of its games in the seat where the main player is weak)
        main_exploiter=dict(use=False, snapshot_every=1000, strong_win_rate=0.6),
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

    league_pipeline([main_config, create_config], seed=0, max_env_step=300_000)
