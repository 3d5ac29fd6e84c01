"""The subprocess managers' public names, and an acyclic module graph in ``stride.envs``."""

import ast
import pathlib

import stride.envs
from stride.envs import AsyncSubprocessEnvManager, SyncSubprocessEnvManager
from stride.envs.env_manager.pool import WorkerPoolEnvManager
from stride.utils.registry import ENV_MANAGER_REGISTRY


def test_public_names_and_registry() -> None:
    assert ENV_MANAGER_REGISTRY.get("subprocess") is SyncSubprocessEnvManager
    assert ENV_MANAGER_REGISTRY.get("async_subprocess") is AsyncSubprocessEnvManager
    assert issubclass(AsyncSubprocessEnvManager, SyncSubprocessEnvManager)
    assert issubclass(SyncSubprocessEnvManager, WorkerPoolEnvManager)


def _envs_imports() -> dict:
    """``{module: {stride.envs modules it imports}}``, from the source (any nesting level, lazy imports included)."""
    root = pathlib.Path(stride.envs.__file__).parent
    graph: dict = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = name if parts[-1] == "__init__" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                target = (base + "." + node.module if node.module else base) if node.level else node.module
                deps.add(target)
                deps.update(f"{target}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = deps
    return {m: {d for d in deps if d in graph and d != m and not m.startswith(d + ".")} for m, deps in graph.items()}


def test_stride_envs_modules_form_an_acyclic_graph() -> None:
    """A package's __init__ may import its submodules; otherwise no module reaches itself again."""
    graph = _envs_imports()
    assert "stride.envs.env_manager.subprocess" in graph["stride.envs.env_manager.async_subprocess"]
    state: dict = {}

    def visit(m: str, path: list) -> None:
        state[m] = "open"
        for d in sorted(graph[m]):
            assert state.get(d) != "open", f"import cycle: {' -> '.join(path + [m, d])}"
            if d not in state:
                visit(d, path + [m])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
