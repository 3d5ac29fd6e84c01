"""Gymnasium-Robotics' Fetch arm tasks (``FetchReach-v4`` by default) as Stride envs (type ``'fetch'``).

Observations are goal dicts ``{'observation' (10,), 'achieved_goal' (3,), 'desired_goal' (3,)}``
(float64 in the env, float32 here, as every Gymnasium env in Stride); the reward is sparse, -1
until the gripper is within 5 cm of the goal and 0 there; an episode is 50 steps and only ever
truncated (Fetch never terminates), so the TD target always bootstraps. ``compute_reward`` /
``compute_terminated`` are the wrapped env's own, batched, for HER's relabelling. The evaluator
scores an episode by its last ``info['is_success']`` (``policy.eval.evaluator.metric='success'``).

Needs the ``robotics`` extra (``pip install -c constraints.txt -e ".[robotics]"``); the package registers its ids
when the first env is made, in whichever process makes it (the subprocess managers' workers too).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ...envs.gymnasium_env import GymnasiumConfig, GymnasiumEnv
from ...utils.extras import import_extra
from ...utils.registry import ENV_REGISTRY

#: ``{'observation', 'achieved_goal', 'desired_goal'}`` float32 arrays
GoalObs = Dict[str, npt.NDArray[np.float32]]


@functools.cache
def register_fetch() -> None:
    """Import ``gymnasium_robotics`` (or fail with the extra to install), register its ids and
    make its Fetch envs constructible on this MuJoCo (once per process)."""
    module = import_extra("gymnasium_robotics", "robotics", what="Fetch envs")
    gym.register_envs(module)
    _joint_accessors_for_mujoco4()


def _joint_accessors_for_mujoco4() -> None:
    """Let gymnasium-robotics (<= 1.4.2) build Fetch envs on MuJoCo 4.

    Its joint accessors check ``model.jnt_type[j] in (mjtJoint.mjJNT_HINGE, mjtJoint.mjJNT_SLIDE)``;
    MuJoCo 4's enums compare unequal to the NumPy ints ``jnt_type`` holds when on the left of ``==``
    (``mjJNT_SLIDE == np.int32(2)`` is False), so every Fetch env dies in its constructor with a
    bare ``AssertionError``. Only where the installed pair shows exactly that, the four public
    accessors of ``gymnasium_robotics.utils.mujoco_utils`` (which the envs look up on the module
    each call) are replaced by MuJoCo's named-joint views, ``data.joint(name).qpos`` / ``.qvel``:
    the same slices of ``qpos`` / ``qvel``, without the type check. Nothing changes elsewhere.
    """
    mujoco = import_extra("mujoco", "robotics", what="Fetch envs")
    joint = mujoco.mjtJoint
    if np.int32(int(joint.mjJNT_SLIDE)) in (joint.mjJNT_HINGE, joint.mjJNT_SLIDE):
        return  # the library's own check works with this MuJoCo
    utils = import_extra("gymnasium_robotics.utils.mujoco_utils", "robotics", what="Fetch envs")

    def setter(field: str) -> Callable[[Any, Any, str, Any], None]:
        def set_joint(model: Any, data: Any, name: str, value: Any) -> None:
            view = getattr(data.joint(name), field)
            view[:] = np.broadcast_to(np.asarray(value, dtype=view.dtype), view.shape)
        return set_joint

    def getter(field: str) -> Callable[[Any, Any, str], npt.NDArray[np.float64]]:
        def get_joint(model: Any, data: Any, name: str) -> npt.NDArray[np.float64]:
            return np.array(getattr(data.joint(name), field), dtype=np.float64)
        return get_joint

    for field in ("qpos", "qvel"):
        setattr(utils, f"set_joint_{field}", setter(field))
        setattr(utils, f"get_joint_{field}", getter(field))


@dataclass(frozen=True)
class FetchConfig(GymnasiumConfig):
    """``env`` of a :class:`FetchEnv`: :class:`GymnasiumEnv`'s keys, FetchReach by default."""

    #: (str) the Gymnasium-Robotics Fetch id.
    env_id: Optional[str] = "FetchReach-v4"


@ENV_REGISTRY.register("fetch")
class FetchEnv(GymnasiumEnv[GoalObs, npt.NDArray[np.float32]]):
    """A Gymnasium-Robotics Fetch id (``env_id``, default ``'FetchReach-v4'``) with its goal
    functions; config keys are :class:`~stride.envs.GymnasiumEnv`'s."""

    config_view = FetchConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None) -> None:
        cfg = dict(cfg or {})
        cfg.setdefault("env_id", "FetchReach-v4")
        super().__init__(None, cfg)

    def _create(self) -> gym.Env[GoalObs, npt.NDArray[np.float32]]:
        register_fetch()
        return super()._create()

    def _goal_fn(self, name: str) -> Callable[..., object]:
        fn: object = getattr(self._make().unwrapped, name, None)
        if not callable(fn):
            raise TypeError(f"env '{self.env_id}' has no {name}(achieved_goal, desired_goal, info): not a goal env")
        return fn

    def compute_reward(self, achieved_goal: npt.NDArray[np.generic], desired_goal: npt.NDArray[np.generic],
                       info: Optional[Mapping[str, object]] = None) -> npt.NDArray[np.float32]:
        """The env's sparse reward for ``achieved_goal`` against ``desired_goal`` (batched: -1 or 0)."""
        return np.asarray(self._goal_fn("compute_reward")(achieved_goal, desired_goal, dict(info or {})),
                          dtype=np.float32)

    def compute_terminated(self, achieved_goal: npt.NDArray[np.generic], desired_goal: npt.NDArray[np.generic],
                           info: Optional[Mapping[str, object]] = None) -> npt.NDArray[np.bool_]:
        """The env's termination rule (Fetch: never; one ``False`` for any batch)."""
        return np.asarray(self._goal_fn("compute_terminated")(achieved_goal, desired_goal, dict(info or {})),
                          dtype=np.bool_)
