"""Deterministic, cheap fake environments for testing env managers (and benchmarking them).

``FakeEnv`` is a Stride ``BaseEnv`` whose observations are a pure function of (episode seed, t,
actions), so two runs with the same seeds give identical streams. It can misbehave on demand:
raise in ``step``/``reset`` every k-th call or once, sleep forever in ``step``, ``os._exit``, or
SIGKILL itself. Every step's ``info['key'] = (instance, episode, t)`` is unique across processes,
so a test can prove that no transition is delivered twice.

``ImageGymEnv`` (4x84x84 uint8 obs, trivial dynamics) and ``BurnGymEnv`` (1 ms of CPU per step)
are plain ``gymnasium.Env`` classes so the benchmark can hand the same env to every peer.

"Once" failures are recorded in a marker file (``once_file``) so that they stay "once" even when the
manager renews the env in a new process.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from typing import Dict, Optional, SupportsInt, Tuple, Type, Union, cast

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from typing_extensions import TypedDict, Unpack  # (Unpack before Python 3.11)

from ..envs.base_env import BaseEnv, BaseEnvTimestep
from ..envs.gymnasium_env import GymnasiumEnv
from ..utils.errors import InvalidActionError

__all__ = ["FakeEnv", "FakeEnvError", "ImageGymEnv", "BurnGymEnv", "make_fake_env", "make_gym_env", "fake_dict_space"]


class FakeEnvError(RuntimeError):
    """The crash a ``FakeEnv`` simulates (an env bug, not a user error: managers retry it)."""


def fake_dict_space() -> gym.spaces.Dict:
    """A Dict-of-Box space covering several dtypes (uint8, int32, float32, float64, bool)."""
    return gym.spaces.Dict(
        {
            "image": gym.spaces.Box(0, 255, shape=(3, 5, 5), dtype=np.uint8),
            "count": gym.spaces.Box(-(2**30), 2**30, shape=(2,), dtype=np.int32),
            "vec": gym.spaces.Box(-np.inf, np.inf, shape=(4,), dtype=np.float32),
            "exact": gym.spaces.Box(-np.inf, np.inf, shape=(1,), dtype=np.float64),
            "flag": gym.spaces.Box(0, 1, shape=(2,), dtype=bool),
        }
    )


def _once(path: Optional[str]) -> bool:
    """True the first time it is called for ``path`` (across processes); always True without one."""
    if path is None:
        return True
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True


#: a ``FakeEnv`` Box observation's dtype: a name (``'uint8'``), a NumPy scalar type, ``bool`` / ``int`` / ``float``, a dtype
FakeDType = Union[str, Type[np.generic], Type[bool], Type[int], Type[float], "np.dtype[np.generic]"]

#: a ``FakeEnv`` observation: an array (``obs='box'``) or a dict of arrays (``obs='dict'``)
FakeObs = Union[npt.NDArray[np.generic], Dict[str, npt.NDArray[np.generic]]]


class FakeEnvOptions(TypedDict, total=False):
    """``FakeEnv``'s keyword arguments (what :func:`make_fake_env` passes on)."""

    obs: str
    dtype: FakeDType
    shape: Tuple[int, ...]
    min_len: int
    max_len: int
    step_error_every: int
    reset_error_every: int
    step_error_at: int
    reset_error_at: int
    hang_at: int
    reset_hang_at: int
    exit_at: int
    kill_at: int
    once_file: Optional[str]
    cpu_ms: float


class FakeEnv(BaseEnv[FakeObs, SupportsInt]):
    """A deterministic toy env with switchable faults.

    Args (all keyword): ``obs`` 'box' or 'dict'; ``dtype``/``shape`` of the Box obs; ``min_len``/
    ``max_len``: episode length drawn from the episode seed; ``step_error_every``/
    ``reset_error_every``: raise ``FakeEnvError`` on every k-th call (counted per instance);
    ``step_error_at``/``reset_error_at``: raise on that call number only (1-based), once per
    ``once_file`` if given; ``hang_at``/``reset_hang_at``: sleep forever on that step/reset call; ``exit_at``: ``os._exit(3)``
    on that step call; ``kill_at``: SIGKILL itself on that step call; ``cpu_ms``: burn this much CPU
    per step. The action space is Discrete(3); action 0 keeps the state, 1 adds one, 2 subtracts one.
    """

    def __init__(
        self,
        obs: str = "box",
        dtype: FakeDType = np.float32,
        shape: Tuple[int, ...] = (3,),
        min_len: int = 5,
        max_len: int = 15,
        step_error_every: int = 0,
        reset_error_every: int = 0,
        step_error_at: int = 0,
        reset_error_at: int = 0,
        hang_at: int = 0,
        reset_hang_at: int = 0,
        exit_at: int = 0,
        kill_at: int = 0,
        once_file: Optional[str] = None,
        cpu_ms: float = 0.0,
    ) -> None:
        super().__init__({})
        self._kind = obs
        self._dtype = np.dtype(dtype)
        self._shape = tuple(shape)
        self._min_len, self._max_len = int(min_len), int(max_len)
        self._faults = dict(
            step_every=step_error_every, reset_every=reset_error_every, step_at=step_error_at,
            reset_at=reset_error_at, hang_at=hang_at, reset_hang_at=reset_hang_at, exit_at=exit_at, kill_at=kill_at,
        )
        self._once_file = once_file
        self._cpu_s = cpu_ms / 1000.0
        self.instance = uuid.uuid4().hex[:12]
        self.pid = os.getpid()
        self._step_calls = 0
        self._reset_calls = 0
        self._episode = -1
        self._t = 0
        self._len = 0
        self._state = 0
        self._base = 0
        self._return = 0.0
        self.observation_space = self._make_obs_space()
        self.action_space = gym.spaces.Discrete(3)

    def _make_obs_space(self) -> gym.spaces.Space[FakeObs]:
        # (gymnasium annotates its Dict space as a space of dicts of spaces; its samples are dicts of arrays)
        if self._kind == "dict":
            return cast("gym.spaces.Space[FakeObs]", fake_dict_space())
        if self._kind != "box":
            raise ValueError(f"unknown obs kind '{self._kind}'; valid choices: box, dict")
        if self._dtype == np.bool_:
            return gym.spaces.Box(0, 1, shape=self._shape, dtype=np.bool_)  # type: ignore[arg-type]  # (typed floating|integer only)
        if np.issubdtype(self._dtype, np.integer):
            info = np.iinfo(self._dtype)
            return gym.spaces.Box(info.min, info.max, shape=self._shape, dtype=self._dtype.type)
        return gym.spaces.Box(-np.inf, np.inf, shape=self._shape, dtype=self._dtype.type)

    def _fault(self, name: str, calls: int) -> bool:
        every, at = self._faults[f"{name}_every"], self._faults[f"{name}_at"]
        if every and calls % every == 0:
            return True
        return bool(at) and calls == at and _once(self._once_file)

    def _make_obs(self) -> FakeObs:
        v = self._base + self._state + self._t
        if self._kind == "dict":
            return {
                "image": np.full((3, 5, 5), v % 256, dtype=np.uint8),
                "count": np.array([v, -v], dtype=np.int32),
                "vec": np.array([v, v / 2, self._t, self._base], dtype=np.float32),
                "exact": np.array([v / 3.0], dtype=np.float64),
                "flag": np.array([v % 2 == 0, v % 3 == 0], dtype=bool),
            }
        if self._dtype == np.bool_:
            return np.full(self._shape, v % 2 == 0, dtype=bool)
        if np.issubdtype(self._dtype, np.integer):
            return (np.arange(int(np.prod(self._shape))).reshape(self._shape) + v).astype(self._dtype)
        return (np.arange(int(np.prod(self._shape))).reshape(self._shape) * 0.5 + v).astype(self._dtype)

    def reset(self, seed: Optional[int] = None, **kwargs: object) -> FakeObs:  # type: ignore[override]  # BaseEnv's
        self._reset_calls += 1
        if self._faults["reset_hang_at"] == self._reset_calls and _once(self._once_file):
            while True:
                time.sleep(3600)
        if self._fault("reset", self._reset_calls):
            raise FakeEnvError(f"reset failure (call {self._reset_calls})")
        if seed is None:
            seed = self.next_episode_seed()
        rng = np.random.default_rng(seed)
        self._episode += 1
        self._t = 0
        self._state = 0
        self._return = 0.0
        offset = kwargs.get("offset", 0)
        if not isinstance(offset, (SupportsInt, str)):
            raise TypeError(f"FakeEnv.reset: offset must be an int, got {offset!r}")
        self._base = int(rng.integers(0, 1000)) + int(offset)
        self._len = int(rng.integers(self._min_len, self._max_len + 1))
        return self._make_obs()

    def step(self, action: SupportsInt) -> BaseEnvTimestep[FakeObs]:  # type: ignore[override]  # BaseEnv's
        self._step_calls += 1
        n = self._step_calls
        f = self._faults
        if f["hang_at"] and n == f["hang_at"] and _once(self._once_file):
            while True:
                time.sleep(3600)
        if f["exit_at"] and n == f["exit_at"] and _once(self._once_file):
            os._exit(3)
        if f["kill_at"] and n == f["kill_at"] and _once(self._once_file):
            os.kill(os.getpid(), signal.SIGKILL)
        if self._fault("step", n):
            raise FakeEnvError(f"step failure (call {n})")
        try:
            a = int(action)
        except (TypeError, ValueError):
            a = -1
        if a not in (0, 1, 2):
            raise InvalidActionError(f"action {action!r} is outside the action space Discrete(3); valid actions: 0..2")
        if self._cpu_s:
            end = time.thread_time() + self._cpu_s
            while time.thread_time() < end:
                pass
        self._state += (0, 1, -1)[a]
        self._t += 1
        reward = float(self._state)
        self._return += reward
        info: Dict[str, object] = {"key": (self.instance, self._episode, self._t), "pid": self.pid}
        done = self._t >= self._len
        if done:
            info.update(terminated=False, truncated=True, eval_episode_return=self._return)
        return BaseEnvTimestep(self._make_obs(), reward, done, info)

    def random_action(self) -> int:
        return int(self.action_space.sample())

    def __repr__(self) -> str:
        return f"FakeEnv({self._kind}, {self._dtype}, {self._shape})"


def make_fake_env(**kwargs: Unpack[FakeEnvOptions]) -> FakeEnv:
    """Module-level factory (picklable by reference); use ``functools.partial(make_fake_env, ...)``."""
    return FakeEnv(**kwargs)


class ImageGymEnv(gym.Env[npt.NDArray[np.uint8], Union[int, np.int64]]):
    """4x84x84 uint8 observations, trivial dynamics, episodes of ``max_len`` steps (truncated)."""

    def __init__(self, max_len: int = 200) -> None:
        self.observation_space = gym.spaces.Box(0, 255, shape=(4, 84, 84), dtype=np.uint8)
        self.action_space = gym.spaces.Discrete(4)
        self._max_len = max_len
        self._t = 0

    def reset(self, *, seed: Optional[int] = None,
              options: Optional[Dict[str, object]] = None) -> Tuple[npt.NDArray[np.uint8], Dict[str, object]]:
        super().reset(seed=seed)
        self._t = 0
        return np.zeros((4, 84, 84), dtype=np.uint8), {}

    def step(self, action: Union[int, np.int64]) -> Tuple[npt.NDArray[np.uint8], float, bool, bool, Dict[str, object]]:
        self._t += 1
        obs = np.full((4, 84, 84), self._t % 256, dtype=np.uint8)
        return obs, 1.0, False, self._t >= self._max_len, {}


class BurnGymEnv(gym.Env[npt.NDArray[np.float32], Union[int, np.int64]]):
    """Burns ``cpu_ms`` of CPU (thread time) per step; 4 float32 obs; episodes of ``max_len`` steps."""

    def __init__(self, cpu_ms: float = 1.0, max_len: int = 200) -> None:
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(4,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self._cpu_s = cpu_ms / 1000.0
        self._max_len = max_len
        self._t = 0

    def reset(self, *, seed: Optional[int] = None,
              options: Optional[Dict[str, object]] = None) -> Tuple[npt.NDArray[np.float32], Dict[str, object]]:
        super().reset(seed=seed)
        self._t = 0
        return np.zeros(4, dtype=np.float32), {}

    def step(self, action: Union[int, np.int64]) -> Tuple[npt.NDArray[np.float32], float, bool, bool, Dict[str, object]]:
        end = time.thread_time() + self._cpu_s
        while time.thread_time() < end:
            pass
        self._t += 1
        return np.full(4, self._t, dtype=np.float32), 1.0, False, self._t >= self._max_len, {}


#: what :func:`make_gym_env` makes: around ImageGymEnv, BurnGymEnv, or a Gymnasium id's env
GymEnvs = Union["GymnasiumEnv[npt.NDArray[np.uint8], Union[int, np.int64]]",
                "GymnasiumEnv[npt.NDArray[np.float32], Union[int, np.int64]]",
                GymnasiumEnv]


def make_gym_env(name: str, **kwargs: float) -> GymEnvs:
    """A Stride env around ``'image'`` (ImageGymEnv: ``max_len``), ``'burn'`` (BurnGymEnv: ``cpu_ms``,
    ``max_len``) or any Gymnasium id (``kwargs``: the GymnasiumEnv config)."""
    if name == "image":
        return GymnasiumEnv(ImageGymEnv(int(kwargs.get("max_len", 200))))
    if name == "burn":
        return GymnasiumEnv(BurnGymEnv(kwargs.get("cpu_ms", 1.0), int(kwargs.get("max_len", 200))))
    return GymnasiumEnv(name, kwargs or None)
