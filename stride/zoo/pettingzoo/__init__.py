"""PettingZoo (multi-agent; extra ``[multiagent]``): a cooperative parallel env (MPE's simple
spread, from ``mpe2``) and two-player board games (tic-tac-toe, connect four) against a fixed
opponent played inside the env.

The env is ``stride.envs.PettingZooEnv`` (env type ``'pettingzoo'``, ``env_id`` = the env's module);
the entries show each (env, agent) to the workers as its own env id
(``stride.envs.MultiAgentManager``), so DQN and PPO train one parameter-shared model on every
agent's transitions. Env steps count agent transitions (simple spread: 3 per env step).

The board games' rules -- the fixed opponents ``'random'`` and ``'win_block'`` and the left-right
mirror (``env.mirror=True``: a sample transform) -- are :mod:`.board_rules`, registered by name
when this package is imported (the env and the league look them up by name)."""

from .board_rules import BOARD_GAMES, BoardGame, mirror_samples, mirror_transition, random_opponent, win_block_opponent

__all__ = ["BOARD_GAMES", "BoardGame", "mirror_samples", "mirror_transition", "random_opponent", "win_block_opponent"]
