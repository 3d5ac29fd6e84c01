"""What every env step and reset is checked for: the observation fits the observation space, and
reward and observation are finite.

A NaN from one env otherwise reaches the replay buffer and the loss long before anyone sees it,
and an observation of the wrong shape ends in a NumPy traceback when the policy stacks the
batch. DI-engine, SB3 and Tianshou check neither on the step path (SB3's ``VecCheckNan`` is an
opt-in wrapper that tests every array with ``np.isnan``/``np.isinf``).

:func:`make_step_check` builds one function ``ok(obs, reward)`` per observation space that the
managers call on every step (in this process, and in each worker for the subprocess managers).
It is a suspicion test, cheap on the common case: a type check, a shape compare, ``isfinite`` of
the reward and, for float observations, ``isfinite`` of one number computed from all values (the
sum of a short vector as Python floats, a scaled dot product for longer ones: a NaN or an
infinity makes either non-finite). Integer and bool observations cannot be NaN and get no value
check. A false suspicion (huge float64 values whose sum overflows, an observation that is a list,
a ``dict`` subclass) is cleared by :func:`find_problem`, which checks exactly and says what is
wrong. Per-step cost on this repository's VM: ~0.2 us for CartPole's float32 (4,) observation
against ~0.9 us for ``np.isfinite(obs).all()`` (see ``benchmarks/env_managers/README.md``).
"""

from __future__ import annotations

import math
from typing import Any, Callable, List, Mapping, Optional, Tuple

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ...utils.errors import StrideError
from ..agent_dict import AgentDict
from .shm import LayoutEntry, obs_layout

NONFINITE_CHOICES = ("raise", "drop", "ignore")
_SHORT = 16  # float vectors up to this size are summed as Python floats (cheaper than a BLAS dot)

#: ``ok(obs, reward)`` of one env's steps (its closures take Any: the hot path's exact type tests
#: narrow nothing mypy can follow)
StepCheck = Callable[[object, object], bool]


class NonFiniteError(StrideError, ValueError):
    """An env returned a NaN or infinite reward or observation (``env.manager.nonfinite='raise'``).
    A failure of the env at run time, not of the command: the ``stride`` command exits with 1."""

    exit_code = 1


class ObservationShapeError(StrideError, ValueError):
    """An env returned an observation that does not fit its observation space."""


def env_label(env: object) -> str:
    """How messages name an env: its Gymnasium id when it has one, else its class name."""
    label = getattr(env, "env_id", None)
    return str(label) if label else type(env).__name__


def _always_ok(obs: Any, reward: Any) -> bool:
    return True


def _finite_values(shape: Tuple[int, ...], dtype: np.dtype[Any]) -> Callable[[npt.NDArray[Any]], bool]:
    """A cheap test that a float array of ``shape`` holds only finite values: a NaN or an infinity
    makes the sum of the values non-finite. Short vectors are summed as Python floats (~0.1 us;
    overflow of huge float64 values can make it wrongly False, never wrongly True); longer arrays
    by a dot product with a constant 2**-32 (~0.3 us), which no finite float32 or float64 value
    can overflow (so it warns only for +inf and -inf together)."""
    isfinite, vdot = math.isfinite, np.vdot
    size = int(np.prod(shape, dtype=np.int64))
    if len(shape) == 1 and size <= _SHORT:
        return lambda a: isfinite(sum(a.tolist()))
    weights = np.full(shape, 2.0**-32, dtype=dtype)
    if len(shape) == 1:
        return lambda a: isfinite(a.dot(weights))
    return lambda a: isfinite(vdot(a, weights))


# anything odd (a list, a None reward, a warning turned into an error) means "look closer"
_ODD = (TypeError, ValueError, OverflowError, KeyError, AttributeError, ArithmeticError, RuntimeWarning)


def make_step_check(space: gym.spaces.Space[object], finite: bool) -> StepCheck:
    """``ok(obs, reward)``: True when ``obs`` is an array (or dict of arrays) of the space's shapes
    and, if ``finite``, reward and observation are finite. False means "look closer" with
    :func:`find_problem`. Spaces without a fixed numeric layout get only the finite test. An
    :class:`AgentDict` (``{agent: obs}``, rewards ``{agent: reward}``) is checked agent by agent."""
    if isinstance(space, AgentDict):
        return _check_agents(space, finite)
    layout = obs_layout(space)
    if layout is None:
        return _check_any(finite)
    if layout[0][0] is None:  # a plain Box
        _, shape, dtype, _ = layout[0]
        return _check_box(shape, dtype, finite)
    return _check_dict(layout, finite)


def _check_any(finite: bool) -> StepCheck:
    """For spaces without a fixed numeric layout: finite values only (exactly, ``_all_finite``)."""
    if not finite:
        return _always_ok
    isfinite = math.isfinite

    def ok_any(obs: Any, reward: Any) -> bool:
        try:
            return isfinite(reward) and _all_finite(obs)
        except _ODD:
            return False

    return ok_any


def _check_box(shape: Tuple[int, ...], dtype: np.dtype[Any], finite: bool) -> StepCheck:
    """For a plain Box: an ndarray of ``shape``; float values and the reward finite if ``finite``."""
    isfinite, ndarray = math.isfinite, np.ndarray
    if dtype.kind == "f" and finite:
        values_ok = _finite_values(shape, dtype)

        def ok_float(obs: Any, reward: Any) -> bool:
            try:
                return type(obs) is ndarray and obs.shape == shape and isfinite(reward) and values_ok(obs)
            except _ODD:
                return False

        return ok_float
    if dtype.kind == "f":
        return lambda obs, reward: type(obs) is ndarray and obs.shape == shape

    def ok_int(obs: Any, reward: Any) -> bool:  # integer/bool values cannot be NaN; the reward can
        try:
            return (type(obs) is ndarray and obs.shape == shape and (obs.dtype is dtype or obs.dtype.kind in "biu")
                    and (not finite or isfinite(reward)))
        except _ODD:
            return False

    return ok_int


def _check_dict(layout: List[LayoutEntry], finite: bool) -> StepCheck:
    """For a Dict of Boxes: a dict with an ndarray of the right shape per key (values as ``_check_box``)."""
    isfinite, ndarray = math.isfinite, np.ndarray
    parts = [(key, shape, _finite_values(shape, dtype) if finite and dtype.kind == "f" else None, dtype)
             for key, shape, dtype, _ in layout]
    n = len(parts)

    def ok_dict(obs: Any, reward: Any) -> bool:
        try:
            if type(obs) is not dict or len(obs) != n or (finite and not isfinite(reward)):
                return False
            for key, shape, values_ok, dtype in parts:
                value = obs[key]
                if type(value) is not ndarray or value.shape != shape:
                    return False
                if values_ok is not None:
                    if not values_ok(value):
                        return False
                elif finite and value.dtype is not dtype and value.dtype.kind not in "biu":
                    return False
            return True
        except _ODD:
            return False

    return ok_dict


def _check_agents(space: AgentDict, finite: bool) -> StepCheck:
    """For an AgentDict: a dict over some of the agents, each agent's observation checked by its
    space's check with its reward (a ``{agent: reward}`` dict; an agent without one: 0.0)."""
    checks = {agent: make_step_check(sub, finite) for agent, sub in space.spaces.items()}

    def ok_agents(obs: Any, reward: Any) -> bool:
        try:
            if type(obs) is not dict or (type(reward) is not dict and reward != 0.0):
                return False
            rewards = reward or {}
            if finite and not all(isfinite(r) for r in rewards.values()):
                return False
            return all(checks[agent](value, rewards.get(agent, 0.0)) for agent, value in obs.items())
        except _ODD:
            return False

    isfinite = math.isfinite
    return ok_agents


def _all_finite(x: Any) -> bool:
    """Exactly: whether every number in ``x`` (array, scalar, dict / tuple / list of them) is finite."""
    if isinstance(x, np.ndarray):
        return x.dtype.kind not in "fc" or bool(np.isfinite(x).all())
    if isinstance(x, (float, complex, np.floating, np.complexfloating)):
        return bool(np.isfinite(x))
    if isinstance(x, Mapping):
        return all(_all_finite(v) for v in x.values())
    if isinstance(x, (tuple, list)):
        return all(_all_finite(v) for v in x)
    return True  # ints, bools, strings, None, objects: nothing that can be NaN


def _first_nonfinite(x: Any, path: str) -> Optional[str]:
    """``path[i, j] = nan (k of n values)`` for the first non-finite number in ``x``, or None."""
    if isinstance(x, Mapping):
        for k, v in x.items():
            found = _first_nonfinite(v, f"{path}[{k!r}]")
            if found:
                return found
        return None
    if isinstance(x, (tuple, list)) and not all(isinstance(v, (int, float, np.number)) for v in x):
        for k, v in enumerate(x):
            found = _first_nonfinite(v, f"{path}[{k}]")
            if found:
                return found
        return None
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError):
        return None
    if arr.dtype.kind not in "fc":
        return None
    bad = ~np.isfinite(arr)
    if not bad.any():
        return None
    if arr.ndim == 0:
        return f"{path} = {arr.item()}"
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{path}[{', '.join(map(str, where))}] = {arr[where].item()} ({int(bad.sum())} of {arr.size} values)"


def _shape_of(x: Any) -> Any:
    try:
        return tuple(np.shape(x))
    except (TypeError, ValueError):  # ragged
        return f"a ragged {type(x).__name__}"


def find_problem(space: gym.spaces.Space[object], obs: object, reward: object, finite: bool) -> Optional[Tuple[str, str]]:
    """What is wrong with a step's observation and reward, exactly (after ``ok`` said "look
    closer"): ``('shape', text)``, ``('nonfinite', text)`` or None (nothing: a false suspicion)."""
    if isinstance(space, AgentDict):
        return _agents_problem(space, obs, reward, finite)
    layout = obs_layout(space)
    if layout is not None and layout[0][0] is None:
        shape = layout[0][1]
        got = _shape_of(obs)
        if got != shape:
            return "shape", f"an observation of shape {got} where the observation space {space} has shape {shape}"
    elif layout is not None:
        keys = [key for key, _, _, _ in layout]
        if not isinstance(obs, Mapping) or sorted(map(str, obs)) != sorted(map(str, keys)):
            got = sorted(obs) if isinstance(obs, Mapping) else type(obs).__name__
            return "shape", f"an observation {got!r} where the observation space {space} has keys {keys}"
        for key, shape, _, _ in layout:
            got = _shape_of(obs[key])
            if got != shape:
                return "shape", f"an observation[{key!r}] of shape {got} where the observation space has shape {shape} there"
    if not finite:
        return None
    if not _all_finite(reward):
        shown = reward.tolist() if isinstance(reward, (np.ndarray, np.generic)) else reward
        return "nonfinite", f"a non-finite reward {shown!r}"
    bad = _first_nonfinite(obs, "observation")
    if bad:
        return "nonfinite", f"a non-finite {bad}"
    return None


def _agents_problem(space: AgentDict, obs: object, reward: object, finite: bool) -> Optional[Tuple[str, str]]:
    """:func:`find_problem` for an AgentDict, naming the agent."""
    if not isinstance(obs, Mapping) or not set(obs) <= set(space.spaces):
        got = sorted(map(str, obs)) if isinstance(obs, Mapping) else type(obs).__name__
        return "shape", f"an observation {got!r} where the observation space {space} has agents {list(space.spaces)}"
    rewards = reward if isinstance(reward, Mapping) else {}
    for agent, value in obs.items():
        problem = find_problem(space.spaces[agent], value, rewards.get(agent, 0.0), finite)
        if problem is not None:
            return problem[0], f"(agent {agent!r}) {problem[1]}"
    if finite and not _all_finite(reward):
        shown = {str(k): float(v) for k, v in rewards.items()} if rewards else reward
        return "nonfinite", f"a non-finite reward {shown!r}"
    return None


def nonfinite_message(env_id: int, label: str, what: str, step: Optional[int], advice: bool) -> str:
    """One line naming the env, the step (None: at reset) and what was bad; with ``advice``, the
    config that lets a run go on."""
    when = "at reset" if step is None else f"at episode step {step}"
    tail = ("; env.manager.nonfinite='drop' closes such episodes as abnormal and goes on, 'ignore' "
            "passes them through") if advice else ""
    return f"env {env_id} ({label}) returned {what} {when}{tail}"


def shape_message(env_id: int, label: str, what: str) -> str:
    return f"env {env_id} ({label}) returned {what}"
