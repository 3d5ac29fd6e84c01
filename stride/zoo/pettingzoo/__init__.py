"""PettingZoo (multi-agent; extra ``[multiagent]``): a cooperative parallel env (MPE's simple
spread, from ``mpe2``) and two-player board games (tic-tac-toe, connect four) against a fixed
opponent played inside the env.

The env is ``stride.envs.PettingZooEnv`` (env type ``'pettingzoo'``, ``env_id`` = the env's module);
the entries show each (env, agent) to the workers as its own env id
(``stride.envs.MultiAgentManager``), so DQN and PPO train one parameter-shared model on every
agent's transitions. Env steps count agent transitions (simple spread: 3 per env step)."""
