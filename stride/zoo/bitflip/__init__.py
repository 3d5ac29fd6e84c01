"""BitFlip, HER's toy goal-conditioned task (env type ``'bitflip'``, ``-e bitflip``): configs for
DQN + HER (``bitflip_her_dqn``) and plain DQN (``bitflip_dqn``) in ``config/``."""

from .envs import BitFlipEnv, BitFlipGymEnv, bitflip_success

__all__ = ["BitFlipEnv", "BitFlipGymEnv", "bitflip_success"]
