"""Suite-wide settings: one torch thread (RL nets are small; on 2 shared cores more threads only add contention)."""

import torch

torch.set_num_threads(1)
