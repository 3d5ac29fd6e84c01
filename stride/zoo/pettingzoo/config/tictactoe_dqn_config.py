"""DQN on tic-tac-toe against a fixed opponent: `stride -m serial -e tictactoe -p dqn -s 0` (or `-c` this file).

Needs PettingZoo: ``pip install -c constraints.txt -e ".[multiagent]"``. The learner plays ``player_1`` (moves
first); ``env.opponent`` plays ``player_2`` inside the env: ``'random'`` (a random legal move) or
``'win_block'`` (win if it can, else block, else random). Observations are PettingZoo's
``{'observation': (3, 3, 2) int8 planes, 'action_mask': (9,) int8}``: the DQN acts, explores and
bootstraps over legal moves only. Return per game: +1 win, 0 draw, -1 loss.

Source: Tianshou's tic-tac-toe DQN example (``test/pettingzoo/tic_tac_toe.py``, DQN against a random
masked opponent): lr 1e-4, gamma 0.9 ("a smaller gamma favors earlier win"), 3-step returns,
target network copied every 320 updates, replay 20,000, batch 64, epsilon 0.1 while training,
MLP 128-128-128-128 with a linear Q head, 10 envs collecting 10 steps per 1 update (0.1 updates per
step), 640 warm-up steps, 50,000 env steps; its stop rule is a mean return of 0.6.
Differences: Stride's DQN uses double-Q targets; evaluation is greedy (Tianshou's: epsilon 0.05);
the warm-up steps are random legal moves; the stop rule is 0.8 on 20 games confirmed on 100.
"""

main_config = dict(
    exp_name="tictactoe_dqn",
    env=dict(
        env_id="pettingzoo.classic.tictactoe_v3",
        opponent="random",
        collector_env_num=10,
        evaluator_env_num=10,
        n_evaluator_episode=20,
        stop_value=0.8,
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
            learning_rate=1e-4,
            target_update_freq=320,
            learner=dict(hook=dict(save_ckpt_after_iter=1000)),
        ),
        collect=dict(n_sample=10),
        eval=dict(evaluator=dict(eval_freq_envstep=2000, confirm_episode=100)),
        other=dict(
            eps=dict(type="linear", start=0.1, end=0.1, decay=1),
            replay_buffer=dict(replay_buffer_size=20000),
        ),
    ),
)

create_config = dict(
    env=dict(type="pettingzoo"),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
    replay_buffer=dict(type="naive"),
)

if __name__ == "__main__":
    from stride.entry import serial_pipeline

    serial_pipeline([main_config, create_config], seed=0, max_env_step=50_000)
