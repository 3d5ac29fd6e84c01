"""MinAtar (Young & Tian 2019): Atari-like games on 10x10 grids, CPU-sized (extra ``[minatar]``).

The env is ``stride.envs.MinAtarEnv`` (env type ``'minatar'``): channel-first uint8 planes."""
