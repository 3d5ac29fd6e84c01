"""The env's units for continuous actions: ``policy.action_range`` and the affine map onto it.

Continuous policies hand out actions in the units of the env's own ``Box`` action space, as
Stable-Baselines3's ``predict`` does (``unscale_action``), so a user who steps a plain Gymnasium env
with ``collect_mode`` / ``eval_mode`` output gets the torque the policy means. DI-engine instead
emits [-1, 1] and relies on its env wrapper's ``act_scale``: on a plain Pendulum that is half the
torque, and SAC never learns. The entries fill ``policy.action_range`` from their envs' action
space (``[low, high]``, per dimension; ``compile_config(..., action_space=...)`` for a user who
builds the pieces), so no flag is needed; a squashed actor whose range was never filled refuses
to act, with the fix, instead of acting at a wrong scale. Learning keeps what each
algorithm learns in: tanh-squashed actors (SAC, DDPG, TD3) learn in [-1, 1] and
:class:`ActionScale` maps their outputs out and the stored actions back; Gaussian actors (PPO,
A2C) learn in the env's units and only clip to the range.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ..utils.errors import ConfigError


#: an action space's bounds as two float32 arrays of the action's size
Bounds = Tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]


def parse_action_range(value: object, action_shape: object) -> Optional[Bounds]:
    """``[low, high]`` (scalars or per-dimension lists) -> two float32 arrays of the action's size,
    or None when ``value`` is None. Refuses non-finite bounds and ``low >= high`` with one line."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ConfigError(f"policy.action_range must be [low, high] (scalars or per-dimension lists), got {value!r}")
    size = int(np.prod(np.asarray(action_shape))) if action_shape is not None else None
    try:
        low, high = (np.asarray(v, dtype=np.float64).reshape(-1) for v in value)
        if size is not None:
            low, high = np.broadcast_to(low, (size,)), np.broadcast_to(high, (size,))
    except (TypeError, ValueError):
        raise ConfigError(f"policy.action_range {value!r} does not fit the action shape {action_shape!r}") from None
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high)) and np.all(low < high)):
        raise ConfigError(f"policy.action_range must hold finite bounds with low < high, got {value!r}")
    return low.astype(np.float32), high.astype(np.float32)


#: why a squashed actor without a range refuses to act, and the fix
UNKNOWN_RANGE = ("policy.action_range is None: this policy's actions are squashed into [-1, 1] and need the env's "
                 "bounds to leave in its units; valid choices: compile_config(..., action_space=env.action_space) "
                 "(a bounded Box) or policy.action_range=[low, high]")


class ActionScale:
    """The affine map between a squashed actor's [-1, 1] and the env's ``[low, high]``, batch-wise.
    ``to_env`` clips to the bounds, so rounding never leaves the space; ``from_env`` maps an
    env-unit action (the policy's own, a random warm-up action, a demonstration) back to what the
    learner trains on. Without bounds (``policy.action_range`` None) both refuse with one line
    (:data:`UNKNOWN_RANGE`): an identity would hand a Pendulum half its torque, silently."""

    def __init__(self, bounds: Optional[Bounds]) -> None:
        self.bounds = bounds
        if bounds is not None:
            low, high = (b.astype(np.float64) for b in bounds)
            self._low, self._high, self._half = low, high, (high - low) / 2.0

    @classmethod
    def from_config(cls, value: object, action_shape: object) -> "ActionScale":
        """The scale of a ``policy.action_range`` value (None: unknown, see the class docstring)."""
        return cls(parse_action_range(value, action_shape))

    def to_env(self, action: npt.NDArray[np.floating]) -> npt.NDArray[np.floating]:
        """[-1, 1] -> [low, high] (same dtype)."""
        if self.bounds is None:
            raise ConfigError(UNKNOWN_RANGE)
        out = self._low + (action + 1.0) * self._half
        return np.clip(out, self._low, self._high).astype(action.dtype, copy=False)

    def from_env(self, action: Union[float, Sequence[float], npt.NDArray[np.floating]]) -> npt.NDArray[np.float32]:
        """[low, high] -> [-1, 1] (float32)."""
        if self.bounds is None:
            raise ConfigError(UNKNOWN_RANGE)
        a = np.asarray(action, dtype=np.float32)
        return np.clip((a - self._low) / self._half - 1.0, -1.0, 1.0).astype(np.float32)

