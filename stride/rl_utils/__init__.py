"""Pure RL math on tensors / lists: TD and n-step targets, GAE, exploration schedules.

Every function here is pure (no module state) and tested against hand-computed numbers.
"""

from .td import min_q_value, q_nstep_td_error, v_nstep_td_error
from .nstep import get_nstep_return_data
from .gae import get_gae
from .exploration import get_epsilon_greedy_fn

__all__ = [
    "q_nstep_td_error", "get_nstep_return_data", "get_gae", "get_epsilon_greedy_fn", "v_nstep_td_error", "min_q_value",
]
