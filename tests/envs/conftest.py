"""Shared fixtures for env and env-manager tests: build managers over fake envs, close them after."""

from __future__ import annotations

import functools

import pytest

from stride.envs import AsyncSubprocessEnvManager, BaseEnvManager, SyncSubprocessEnvManager
from stride.testing import make_fake_env

MANAGERS = {"base": BaseEnvManager, "subprocess": SyncSubprocessEnvManager, "async_subprocess": AsyncSubprocessEnvManager}


@pytest.fixture
def make_manager():
    """``make_manager(kind, n=4, env_kwargs=None, **cfg)`` -> manager (closed at teardown)."""
    made = []

    def _make(kind: str, n: int = 4, env_kwargs: dict | None = None, env_fns: list | None = None, **cfg):
        if env_fns is None:
            env_fns = [functools.partial(make_fake_env, **(env_kwargs or {})) for _ in range(n)]
        if kind == "base":
            cfg = {k: v for k, v in cfg.items() if k not in ("shared_memory", "envs_per_worker", "copy_on_get")}
        m = MANAGERS[kind](env_fns, cfg)
        made.append(m)
        return m

    yield _make
    for m in made:
        m.close()
