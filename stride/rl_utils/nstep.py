"""n-step return data for a trajectory segment of one episode."""

from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, SupportsFloat

from ..utils.errors import ConfigError


def get_nstep_return_data(data: Sequence[Mapping[str, object]], nstep: int, gamma: float) -> List[Dict[str, object]]:
    """Turn 1-step transitions of ONE episode segment into n-step transitions.

    For transition ``t`` with ``m = min(nstep, len(data) - t)`` real steps ahead:
    ``reward = sum_{k<m} gamma**k * r_{t+k}``, ``next_obs``/``done`` come from transition
    ``t+m-1`` and ``value_gamma = gamma**m``. Windows stop at a terminal step (``done`` = terminated),
    whose bootstrap is then masked by ``done``. Unlike DI-engine, the tail's ``value_gamma`` counts
    the real rewards (DI is one power short, which is wrong on truncated tails), and rewards are
    summed here once instead of every learner step.

    The caller guarantees the segment is one episode and, if it ends mid-episode, drops the last
    ``nstep - 1`` outputs (their windows are incomplete) -- the collector does that.
    """
    if nstep < 1:
        raise ConfigError(f"nstep must be >= 1, got {nstep}")
    n = len(data)
    if nstep == 1:
        out: List[Dict[str, object]] = []
        for d in data:
            one = dict(d)
            one["value_gamma"] = gamma
            out.append(one)
        return out
    rewards = [_number(d["reward"]) for d in data]
    dones = [bool(d["done"]) for d in data]
    out = []
    for t in range(n):
        ret, disc, last = 0.0, 1.0, t
        for k in range(nstep):
            j = t + k
            if j >= n:
                break
            ret += disc * rewards[j]
            disc *= gamma
            last = j
            if dones[j]:
                break
        d = dict(data[t])
        d["reward"] = ret
        d["next_obs"] = data[last]["next_obs"]
        d["done"] = data[last]["done"]
        d["value_gamma"] = disc
        out.append(d)
    return out


def _number(value: object) -> float:
    """A reward as a float (Python and NumPy numbers, 0-d arrays and tensors)."""
    if not isinstance(value, SupportsFloat):
        raise TypeError(f"a reward must be a number, got {type(value).__name__}: {value!r}")
    return float(value)
