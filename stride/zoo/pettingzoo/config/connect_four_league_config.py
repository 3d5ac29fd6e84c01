"""Self-play DQN on connect four with a league: `stride -m league -c` this file `-s 0`.

Needs ``pip install -c constraints.txt -e ".[multiagent,league]"``. The main player (one DQN, both seats; PettingZoo's
``(6, 7, 2)`` planes are the mover's view, so one network plays either side) meets per episode, as
``league.branch_probs`` draws: ``win_block`` (win if possible, else block, else random -- the only
fixed opponent here, 60 %), a frozen snapshot or ``win_block`` picked by PFSP (``'squared'``: the
hardest first, 20 %), or itself (plain self-play, 20 %) -- in a random seat. ``win_block`` plays a
random move whenever nothing is forced, so it shows every position ``random`` does and also
punishes each threat left open; beating it means building threats it cannot block (two at once, or
one above a cell it fills at random). A snapshot every 2,500-5,000 train iterations; after each,
100 games per evaluation opponent (``random``, ``win_block``) and seat; the run stops once it wins
>= 98 % against random and >= 75 % against ``win_block`` in each seat (above the must-hold's 95 %
/ 60 % against PettingZoo-side players, so 100 noisy games do not stop it early), else at its
env-step limit, returning the main player of its best evaluation (``league.return_best``).

Sources: the learner starts from ``tictactoe_league_config`` (itself Tianshou's tic-tac-toe DQN
recipe: 3-step double-Q targets, target copy every 500 updates, batch 128, lr 5e-4, epsilon 0.2 ->
0.05) and ``connect_four_dqn_config`` (the same recipe with a longer horizon for games of up to 21
moves a side); here gamma 0.95 (a win 10 moves away still counts 0.6), an MLP 256 x 3 on the 84
input planes, replay 100,000 and epsilon decay over 50,000 steps. The league's rule (snapshot
every ``snapshot_every`` to twice that, ``strong_win_rate`` 0.7) is DI-engine's ``OneVsOneLeague``;
PFSP ``'squared'`` is AlphaStar's. Tuned on seed 0 for the 2-core CPU budget (benchmarks/league/
README.md): with ``fixed_opponents`` ``random`` + ``win_block`` at 50 % and self-play 30 % (1 in 3
episodes against ``win_block``) and 2 updates per 10-step collect, the main player won 43 % / 13 %
of its games against ``win_block`` first / second at 114k env steps; with ``win_block`` alone at
60 %, self-play 20 % and 3 updates per collect (this file), 56 % / 22 % already at 59k. Each
collected transition also goes to replay mirrored left-right (``env.mirror``: the board games' sample transform; same updates
and train CPU per env step): over seeds 0-2 at 150k env steps the medians rose from 89 / 77 to
92 / 84 % won against random and from 56 / 26 to 56 / 30 against the lookahead (first / second
seat), though seed 1 alone lost ground against the lookahead first (52 -> 29). A conv encoder
(``encoder='board'``) learned slower at this budget, and more of the second seat in training
(``league.main_seat_probs``) did not help that seat.
"""

main_config = dict(
    exp_name="connect_four_league",
    env=dict(
        env_id="pettingzoo.classic.connect_four_v3",
        collector_env_num=8,
        evaluator_env_num=1,
        n_evaluator_episode=2,
        stop_value=1.0,  # unused: the league's own evaluation decides when to stop
        mirror=True,  # every transition also goes to replay mirrored left-right (the board is symmetric)
    ),
    policy=dict(
        model=dict(obs_shape=[6, 7, 2], action_shape=7, encoder="mlp", encoder_hidden_size_list=[256, 256, 256],
                   dueling=False, head_layer_num=0),
        discount_factor=0.95,
        nstep=3,
        random_collect_size=1000,
        learn=dict(
            update_per_collect=3,
            batch_size=128,
            learning_rate=5e-4,
            target_update_freq=500,
            learner=dict(hook=dict(save_ckpt_after_iter=5000)),
        ),
        collect=dict(n_sample=10),
        other=dict(
            eps=dict(type="linear", start=0.2, end=0.05, decay=50000),
            replay_buffer=dict(replay_buffer_size=100000),
        ),
    ),
    league=dict(
        branch_probs=dict(pfsp=0.2, uniform=0.0, fixed=0.6, sp=0.2),
        pfsp_weighting="squared",
        fixed_opponents=["win_block"],
        snapshot_every=2500,
        strong_win_rate=0.7,
        eval_episode=100,
        eval_opponents=["random", "win_block"],
        stop_max_loss_rate=1.0,
        stop_win_rate=dict(random=0.98, win_block=0.75),
        return_best=True,
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

    league_pipeline([main_config, create_config], seed=0, max_env_step=150_000)
