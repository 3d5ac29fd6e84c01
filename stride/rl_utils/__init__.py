"""Pure RL math on tensors / lists: TD and n-step targets, GAE, v-trace, schedules (epsilon, learning rates...).

Every function here is pure (no module state) and tested against hand-computed numbers.
"""

from .td import min_q_value, q_nstep_td_error, v_nstep_td_error
from .nstep import get_nstep_return_data
from .gae import get_gae
from .schedule import Schedule, Scheduled, Schedules, get_epsilon_greedy_fn, parse_schedule
from .ppo import PPOInfo, PPOLoss, adapt_kl_coef, kl_divergence, policy_distribution, ppo_error, ppo_error_continuous
from .a2c import A2CLoss, a2c_error
from .vtrace import VTraceLoss, VTraceReturns, vtrace, vtrace_error
from .sequence import (SequenceNStep, inv_value_rescale, q_sequence_td_error, sequence_learnt_rows, sequence_nstep_return,
                       sequence_priority, value_rescale)

__all__ = [
    "q_nstep_td_error", "get_nstep_return_data", "get_gae", "get_epsilon_greedy_fn", "v_nstep_td_error", "min_q_value", "ppo_error", "ppo_error_continuous", "PPOLoss", "PPOInfo", "policy_distribution", "a2c_error", "A2CLoss",
    "adapt_kl_coef", "kl_divergence", "vtrace", "vtrace_error", "VTraceReturns", "VTraceLoss",
    "value_rescale", "inv_value_rescale", "sequence_nstep_return", "SequenceNStep", "q_sequence_td_error", "sequence_priority",
    "sequence_learnt_rows", "Schedule", "Scheduled", "Schedules", "parse_schedule",
]
