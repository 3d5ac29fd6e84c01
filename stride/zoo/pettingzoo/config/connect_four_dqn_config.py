"""DQN on connect four against a fixed opponent: `stride -m serial -e connect_four -p dqn -s 0` (or `-c` this file).

Needs PettingZoo: ``pip install -c constraints.txt -e ".[multiagent]"``. The learner plays ``player_0`` (moves
first); ``env.opponent`` plays ``player_1`` inside the env (``'random'`` or ``'win_block'``).
Observations: ``{'observation': (6, 7, 2) int8 planes, 'action_mask': (7,) int8}`` (a full column
is illegal); return per game +1 win, 0 draw, -1 loss.

Source: the recipe of ``tictactoe_dqn_config`` (Tianshou's tic-tac-toe DQN example: lr 1e-4,
3-step returns, target copy every 320 updates, replay 20,000, batch 64, epsilon 0.1, MLP
128 x 4, 0.1 updates per env step) with gamma 0.99 in place of 0.9 (games last up to 21 of the
learner's moves, not 5) and a 200,000-step budget; no published connect-four DQN setting to follow.
"""

main_config = dict(
    exp_name="connect_four_dqn",
    env=dict(
        env_id="pettingzoo.classic.connect_four_v3",
        opponent="random",
        collector_env_num=10,
        evaluator_env_num=10,
        n_evaluator_episode=20,
        stop_value=0.8,
    ),
    policy=dict(
        model=dict(obs_shape=[6, 7, 2], action_shape=7, encoder="mlp", encoder_hidden_size_list=[128, 128, 128, 128],
                   dueling=False, head_layer_num=0),
        discount_factor=0.99,
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
        eval=dict(evaluator=dict(eval_freq_envstep=5000, confirm_episode=100)),
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

    serial_pipeline([main_config, create_config], seed=0, max_env_step=200_000)
