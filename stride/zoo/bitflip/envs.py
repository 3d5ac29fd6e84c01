"""BitFlip (Andrychowicz et al., 2017, HER's toy task): flip one of ``n_bits`` bits per step
until the bit string equals the goal.

Observations are Gymnasium-Robotics' goal dicts: ``observation`` (the bits), ``achieved_goal``
(the bits again: the state is the goal space) and ``desired_goal``, float32 0/1 arrays. The start
state and goal are uniform random and differ. Reward convention: **1 when the step reaches the
goal, else 0, and reaching it ends the episode** (DI-engine's; the paper's is -1/0): an episode's
return is then 1 for a success and 0 otherwise, so the evaluator's mean return is the success
rate and ``stop_value=0.9`` means 90 % success. An episode is truncated (bootstrapped, not
terminal) after ``n_bits`` steps, the fewest that can always reach the goal.
``compute_reward`` / ``compute_terminated`` take batches of goals, as Gymnasium-Robotics' do, so
HER relabels a whole batch in one call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Tuple, cast

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from ...config.view import setting
from ...envs.gymnasium_env import GymnasiumConfig, GymnasiumEnv
from ...utils.registry import ENV_REGISTRY

#: ``{'observation', 'achieved_goal', 'desired_goal'}``, float32 0/1 arrays
GoalObs = Dict[str, npt.NDArray[np.float32]]


def bitflip_success(achieved_goal: npt.NDArray[np.generic], desired_goal: npt.NDArray[np.generic]) -> npt.NDArray[np.bool_]:
    """Whether each achieved bit string equals its desired one (the last axis compared)."""
    success: npt.NDArray[np.bool_] = np.asarray(np.all(np.asarray(achieved_goal) == np.asarray(desired_goal), axis=-1))
    return success


class BitFlipGymEnv(gym.Env[GoalObs, np.int64]):
    """The Gymnasium env; action ``i`` flips bit ``i``."""

    def __init__(self, n_bits: int = 15) -> None:
        if not (isinstance(n_bits, int) and n_bits >= 1):
            raise ValueError(f"n_bits must be an int >= 1, got {n_bits!r}")
        self.n_bits = n_bits
        bits = gym.spaces.Box(0.0, 1.0, shape=(n_bits,), dtype=np.float32)
        # (gymnasium types a Dict space as a Space of Dict[str, Any]: the keys' arrays are these float32 ones)
        self.observation_space = cast("gym.spaces.Space[GoalObs]",
                                      gym.spaces.Dict({"observation": bits, "achieved_goal": bits, "desired_goal": bits}))
        self.action_space = gym.spaces.Discrete(n_bits)
        self.state = np.zeros(n_bits, dtype=np.float32)
        self.goal = np.zeros(n_bits, dtype=np.float32)
        self.steps = 0

    def _obs(self) -> GoalObs:
        return {"observation": self.state.copy(), "achieved_goal": self.state.copy(), "desired_goal": self.goal.copy()}

    def reset(self, *, seed: Optional[int] = None,
              options: Optional[Dict[str, object]] = None) -> Tuple[GoalObs, Dict[str, object]]:
        super().reset(seed=seed)
        self.state = self.np_random.integers(0, 2, self.n_bits).astype(np.float32)
        self.goal = self.state
        while np.array_equal(self.goal, self.state):
            self.goal = self.np_random.integers(0, 2, self.n_bits).astype(np.float32)
        self.steps = 0
        return self._obs(), {}

    def step(self, action: np.int64) -> Tuple[GoalObs, float, bool, bool, Dict[str, object]]:
        if not (0 <= int(action) < self.n_bits):
            raise ValueError(f"action {action!r} is not a bit index in [0, {self.n_bits})")
        self.state = self.state.copy()
        self.state[int(action)] = 1.0 - self.state[int(action)]
        self.steps += 1
        success = bool(bitflip_success(self.state, self.goal))
        truncated = not success and self.steps >= self.n_bits
        return self._obs(), float(success), success, truncated, {"is_success": success}

    def compute_reward(self, achieved_goal: npt.NDArray[np.generic], desired_goal: npt.NDArray[np.generic],
                       info: Optional[Mapping[str, object]] = None) -> npt.NDArray[np.float32]:
        """1.0 where the goal is reached, else 0.0 (batched)."""
        return bitflip_success(achieved_goal, desired_goal).astype(np.float32)

    def compute_terminated(self, achieved_goal: npt.NDArray[np.generic], desired_goal: npt.NDArray[np.generic],
                           info: Optional[Mapping[str, object]] = None) -> npt.NDArray[np.bool_]:
        """Reaching the goal ends the episode (batched)."""
        return bitflip_success(achieved_goal, desired_goal)


@dataclass(frozen=True)
class BitFlipConfig(GymnasiumConfig):
    """``env`` of a :class:`BitFlipEnv`."""

    #: (str) a name for messages (the env is Stride's own, not a Gymnasium registration).
    env_id: Optional[str] = "BitFlip"
    #: (int) bits in the string; also the episode length.
    n_bits: int = setting(15, "[1, inf)")


@ENV_REGISTRY.register("bitflip")
class BitFlipEnv(GymnasiumEnv[GoalObs, np.int64]):
    """:class:`BitFlipGymEnv` as a Stride env (type ``'bitflip'``), with the goal functions HER calls."""

    config_view = BitFlipConfig

    def __init__(self, cfg: Optional[Mapping[str, object]] = None) -> None:
        n_bits = dict(cfg or {}).get("n_bits", BitFlipConfig().n_bits)  # (the gym env is made before the view is read)
        if not isinstance(n_bits, int):
            raise ValueError(f"n_bits must be an int >= 1, got {n_bits!r}")
        super().__init__(BitFlipGymEnv(n_bits), cfg)
        self._goal_env = BitFlipGymEnv(n_bits)  # its goal functions only; never stepped

    def compute_reward(self, achieved_goal: npt.NDArray[np.generic], desired_goal: npt.NDArray[np.generic],
                       info: Optional[Mapping[str, object]] = None) -> npt.NDArray[np.float32]:
        """The env's reward for reaching ``desired_goal`` with ``achieved_goal`` (batched)."""
        return self._goal_env.compute_reward(achieved_goal, desired_goal, info)

    def compute_terminated(self, achieved_goal: npt.NDArray[np.generic], desired_goal: npt.NDArray[np.generic],
                           info: Optional[Mapping[str, object]] = None) -> npt.NDArray[np.bool_]:
        """Whether reaching ``desired_goal`` with ``achieved_goal`` ends the episode (batched)."""
        return self._goal_env.compute_terminated(achieved_goal, desired_goal, info)
