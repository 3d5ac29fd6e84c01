"""MuJoCo (Gymnasium's v5 envs): HalfCheetah-v5 (``-e halfcheetah``) and Hopper-v5 (``-e hopper``).

Needs the ``mujoco`` extra (``pip install -c constraints.txt -e ".[mujoco]"``); without it making the env fails
with that one line. The PPO configs normalise observations with running statistics
(``policy.obs_norm``) that live in the model's state_dict, so checkpoints and evaluation carry them.
"""
