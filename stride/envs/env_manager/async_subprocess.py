"""``AsyncSubprocessEnvManager`` (``'async_subprocess'``): ``step`` returns whichever envs are ready."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional

from ...config.view import setting
from ...utils.registry import ENV_MANAGER_REGISTRY
from ..base_env import ActT, BaseEnv, BaseEnvTimestep, ObsT
from .pool import WorkerPoolConfig
from .subprocess import SyncSubprocessEnvManager


@dataclass(frozen=True)
class AsyncSubprocessConfig(WorkerPoolConfig):
    """``env.manager`` of ``'async_subprocess'``: when ``step`` returns."""

    #: (int) step returns once at least this many results are ready (or none are in flight).
    wait_num: int = setting(1, "[1, inf)")
    #: (float|None) once one result is ready, wait at most this long for wait_num of them.
    step_wait_timeout: Optional[float] = setting(None, "[0, inf]")


@ENV_MANAGER_REGISTRY.register("async_subprocess")
class AsyncSubprocessEnvManager(SyncSubprocessEnvManager[ObsT, ActT]):
    """Envs in worker processes; ``step`` returns whichever envs are ready.

    Each result is returned exactly once: results of envs stepped in an earlier call, still in
    flight then, come back in a later call. ``ready_obs`` holds the envs waiting for an action
    (waiting until there is at least one while others are in flight).
    """

    config_view = AsyncSubprocessConfig
    _cfg: AsyncSubprocessConfig

    def __init__(self, env_fn: List[Callable[[], BaseEnv[ObsT, ActT]]], cfg: Optional[Mapping[str, object]] = None) -> None:
        super().__init__(env_fn, cfg)
        self._in_order = False

    @property
    def ready_obs(self) -> Dict[int, ObsT]:
        """``{env_id: obs}`` of the envs waiting for an action (not in flight)."""
        if not self._closed and not self._ready_obs and (self._inflight or self._resetting):
            self._pump(lambda: bool(self._ready_obs))
        return self._ready_obs

    @property
    def ready_obs_id(self) -> List[int]:
        return list(self.ready_obs)

    def step(self, actions: Mapping[int, ActT]) -> Dict[int, BaseEnvTimestep[Optional[ObsT]]]:
        """Send the given envs' actions; return the results that are ready (at least ``wait_num``).

        Results already back (e.g. gathered while ``ready_obs`` waited) are taken before the new
        actions go out, so an env's result is never overwritten by its next one.
        """
        self._check_open()
        results, inflight, resetting = self._results, self._inflight, self._resetting
        out = self._take([i for i in results if i not in resetting])
        self._send_steps(actions)
        wait_num = self._cfg.wait_num

        def complete() -> int:
            return len(out) + sum(1 for i in results if i not in resetting and i not in out)

        def enough() -> bool:
            return complete() >= wait_num or not (inflight or resetting)

        wait_s = self._cfg.step_wait_timeout
        if wait_s is None:
            self._pump(enough)
        else:
            self._pump(lambda: complete() > 0 or not (inflight or resetting))
            self._pump(enough, max_wait=wait_s)
        for w in self._workers:  # replies that are already there cost nothing to take
            if w.pending and self._readable(w):
                self._receive(w)
        self._raise_user_error()
        for i in [i for i in results if i not in resetting and i not in out]:
            out[i] = results.pop(i)
        self._order_ready()
        return out
