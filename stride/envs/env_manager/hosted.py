"""The envs one worker process hosts, and what each command of ``protocol.py`` does to them.

Steps and resets are checked by the same function as in the base manager (``checks.py``); an
observation goes into the env's shared-memory slot when there is a block, except an episode's
final one (see ``protocol.py``). Nothing here reads a pipe: ``worker.py`` runs the loop.
"""

from __future__ import annotations

import pickle
import traceback
from typing import Dict, List, Mapping, Optional, Sequence, SupportsFloat

import gymnasium as gym

from ...utils.errors import StrideError
from ..base_env import BaseEnv
from .checks import ObservationShapeError, StepCheck, env_label, find_problem, make_step_check, shape_message
from .protocol import (PROTOCOL, NO_RESET, Call, CallReply, Crash, Failure, Failures, NonFinite, Replay, Reset,
                       ResetReply, Seed, Step, StepReply, UserError)
from .shm import ObsBlock


def user_error(e: BaseException) -> UserError:
    """``e`` pickled for the parent (as a ``StrideError`` with its text if it does not round-trip)."""
    try:
        blob = pickle.dumps(e, PROTOCOL)
        pickle.loads(blob)
    except Exception:
        blob = pickle.dumps(StrideError(f"{type(e).__name__}: {e}"), PROTOCOL)
    return UserError(blob)


def crash(e: BaseException) -> Crash:
    """An exception in env code, with the last lines of its traceback."""
    return Crash(f"{type(e).__name__}: {e}\n{''.join(traceback.format_exception(e)[-3:])}")


_new_tuple = tuple.__new__  # builds a record at half the cost of its Python-level __new__ (same object)


class HostedEnvs:
    """A worker's envs (``ids``: the manager's indices, for messages), its shared-memory block
    and the checks of each env's observation space (``finite``: NaN / inf checks too)."""

    def __init__(self, envs: List[BaseEnv], block: Optional[ObsBlock], ids: Sequence[int], finite: bool) -> None:
        self.envs = envs
        self.block = block
        self.ids = list(ids)
        self.finite = finite
        self.spaces: List[gym.spaces.Space[object]] = [env.observation_space for env in envs]
        self.checks: List[StepCheck] = [make_step_check(space, finite) for space in self.spaces]
        self.reset_kwargs: Dict[int, Mapping[str, object]] = {}  # slot -> the kwargs of its last Reset / Replay

    def _put_obs(self, slot: int, obs: object) -> object:
        """Write ``obs`` into the slot (returning None) or return it to be sent in the message."""
        if self.block is None:
            return obs
        try:
            self.block.write(slot, obs)
        except ValueError as e:
            raise StrideError(f"{e}; observations that do not match observation_space need shared_memory=False") from None
        return None

    def _judge(self, slot: int, obs: object, reward: object) -> Optional[NonFinite]:
        """After the check said "look closer": raise for a wrong shape; NonFinite, or None (all fine)."""
        problem = find_problem(self.spaces[slot], obs, reward, self.finite)
        if problem is None:
            return None
        if problem[0] == "shape":
            raise ObservationShapeError(shape_message(self.ids[slot], env_label(self.envs[slot]), problem[1]))
        return NonFinite(problem[1], env_label(self.envs[slot]))

    # ---- commands --------------------------------------------------------------------------------
    def step(self, cmd: Step) -> StepReply:
        """Step each env; the positions of ended episodes with a reset seed go in ``in_place``."""
        envs, checks, put = self.envs, self.checks, self._put_obs
        rewards: List[Optional[SupportsFloat]] = []
        dones: List[bool] = []
        infos: List[Dict[str, object]] = []
        obs_out: List[object] = []
        failures: Failures = {}
        in_place: List[int] = []
        add_reward, add_done, add_info, add_obs = rewards.append, dones.append, infos.append, obs_out.append
        for slot, action, reset_seed in zip(cmd.slots, cmd.actions, cmd.reset_seeds):
            try:
                obs, reward, done, info = envs[slot].step(action)
                if not checks[slot](obs, reward):
                    failure = self._judge(slot, obs, reward)
                    if failure is not None:
                        self._failed(failure, rewards, dones, infos, obs_out, failures)
                        continue
                if not done:
                    obs = put(slot, obs)
                elif reset_seed != NO_RESET:
                    in_place.append(len(rewards))
            except StrideError as e:
                self._failed(user_error(e), rewards, dones, infos, obs_out, failures)
                continue
            except Exception as e:
                self._failed(crash(e), rewards, dones, infos, obs_out, failures)
                continue
            add_reward(reward)
            add_done(done)
            add_info(info)
            add_obs(obs)
        reply: StepReply = _new_tuple(StepReply, (rewards, dones, infos, obs_out, failures, in_place))  # = StepReply(...)
        return reply

    @staticmethod
    def _failed(failure: Failure, rewards: List[Optional[SupportsFloat]], dones: List[bool],
                infos: List[Dict[str, object]], obs_out: List[object], failures: Failures) -> None:
        """Record ``failure`` at the next position, with placeholders in the columns."""
        failures[len(rewards)] = failure
        rewards.append(None)
        dones.append(False)
        infos.append({})
        obs_out.append(None)

    def reset_in_place(self, cmd: Step, positions: Sequence[int]) -> ResetReply:
        """Reset the envs at ``positions`` of ``cmd`` (ended episodes) with their reset seeds."""
        obs: List[object] = []
        failures: Failures = {}
        for k, p in enumerate(positions):
            slot = cmd.slots[p]
            self._reset_one(k, slot, cmd.reset_seeds[p], self.reset_kwargs.get(slot, {}), obs, failures)
        return ResetReply(obs, failures)

    def reset(self, cmd: Reset) -> ResetReply:
        obs: List[object] = []
        failures: Failures = {}
        for k, (slot, seed, kwargs) in enumerate(zip(cmd.slots, cmd.seeds, cmd.kwargs)):
            self.reset_kwargs[slot] = kwargs
            self._reset_one(k, slot, seed, kwargs, obs, failures)
        return ResetReply(obs, failures)

    def _reset_one(self, k: int, slot: int, seed: Optional[int], kwargs: Mapping[str, object], obs_out: List[object],
                   failures: Failures) -> None:
        """Reset one env; append its observation (None on failure, recorded at position ``k``)."""
        failure: Optional[Failure] = None
        obs: object = None
        try:
            obs = self.envs[slot].reset(seed=seed, **kwargs)
            if not self.checks[slot](obs, 0.0):
                failure = self._judge(slot, obs, 0.0)
            if failure is None:
                obs = self._put_obs(slot, obs)
        except StrideError as e:
            failure = user_error(e)
        except Exception as e:
            failure = crash(e)
        if failure is not None:
            failures[k] = failure
            obs = None
        obs_out.append(obs)

    def replay(self, cmd: Replay) -> ResetReply:
        """Reset with the seed and re-apply the actions (an episode that ends meanwhile is an error)."""
        obs_out: List[object] = []
        failures: Failures = {}
        for k, (slot, seed, kwargs, actions) in enumerate(zip(cmd.slots, cmd.seeds, cmd.kwargs, cmd.actions)):
            self.reset_kwargs[slot] = kwargs
            env = self.envs[slot]
            obs: object = None
            try:
                obs = env.reset(seed=seed, **kwargs)
                for a in actions:
                    obs, _, done, _ = env.step(a)
                    if done:
                        raise StrideError("an env ended its episode while replaying it: the env is not deterministic")
                obs = self._put_obs(slot, obs)
            except StrideError as e:
                failures[k], obs = user_error(e), None
            except Exception as e:
                failures[k], obs = crash(e), None
            obs_out.append(obs)
        return ResetReply(obs_out, failures)

    def seed(self, cmd: Seed) -> CallReply:
        for slot, seed in zip(cmd.slots, cmd.seeds):
            self.envs[slot].seed(seed, dynamic_seed=cmd.dynamic_seed)
        return CallReply([None] * len(cmd.slots), {})

    def call(self, cmd: Call) -> CallReply:
        values: List[object] = []
        failures: Failures = {}
        for k, slot in enumerate(cmd.slots):
            try:
                values.append(getattr(self.envs[slot], cmd.name)(*cmd.args))
            except Exception as e:
                failures[k] = crash(e)
                values.append(None)
        return CallReply(values, failures)

    def close(self) -> None:
        """Close every env (ignoring their errors) and the shared-memory block."""
        for env in self.envs:
            try:
                env.close()
            except Exception:
                pass
        if self.block is not None:
            self.block.close()
