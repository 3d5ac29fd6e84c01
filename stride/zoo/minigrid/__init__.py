"""MiniGrid: DoorKey and an empty room, ``-e doorkey`` / ``-e empty``
(``pip install -c constraints.txt -e ".[minigrid]"``).

The env is :class:`stride.envs.MiniGridEnv` (``env.type='minigrid'``); ``env.obs_type`` picks the
observation: ``'flat'`` (one-hot object / colour / state of the agent's 7x7 view and its
direction, 984 floats, for the MLP models; these configs use it) or ``'image'`` (the view's
encoding, channel-first uint8 3x7x7, for a conv encoder).
"""
