"""The subprocess managers' public names survive the split into pool / subprocess / async_subprocess."""

from stride.envs import AsyncSubprocessEnvManager, SyncSubprocessEnvManager
from stride.envs.env_manager import subprocess as subprocess_module
from stride.envs.env_manager.pool import WorkerPoolEnvManager
from stride.utils.registry import ENV_MANAGER_REGISTRY


def test_public_names_and_registry() -> None:
    assert ENV_MANAGER_REGISTRY.get("subprocess") is SyncSubprocessEnvManager
    assert ENV_MANAGER_REGISTRY.get("async_subprocess") is AsyncSubprocessEnvManager
    assert issubclass(AsyncSubprocessEnvManager, SyncSubprocessEnvManager)
    assert issubclass(SyncSubprocessEnvManager, WorkerPoolEnvManager)
    # the async manager used to live in subprocess.py: the old import path still works
    assert subprocess_module.AsyncSubprocessEnvManager is AsyncSubprocessEnvManager
