"""No ``cfg.get("key", default)`` in ``stride/`` re-states a default its component already declares.

A compiled config holds every declared key, so such a read's default is dead code at best and, at
worst, a second default that drifts from the declared one (the declared one is what
``compile_config`` saves and what the docs list). The scan is precise rather than broad:

* only ``.get`` calls on a *config* are read: a receiver rooted at ``cfg`` / ``config`` /
  ``*_cfg`` or ``self._cfg`` (through attributes, ``["key"]``, ``.get("key")``, ``x or {}`` and
  ``dict(x)``), never ``state`` / ``info`` / ``batch`` dicts;
* a read through ``self._cfg`` inside a class that declares its config (``declared_config()``) is
  matched against that class's own declaration; any other config read against the keys that every
  component of a kind declares (``policy.cuda``, ``policy.learn.multi_gpu``, ``env.manager.*``...),
  so a key only some policies declare (``unroll_len``) is still read with its fallback.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
from typing import Dict, Iterator, List, Mapping, Optional, Set, Tuple

import stride
from stride.config.compile import EnvPipelineConfig, ExperimentConfig
from stride.config.config import declaration
from stride.config.setting import REQUIRED, Setting
from stride.utils.registry import ALL_REGISTRIES, POLICY_REGISTRY, import_components

ROOT = os.path.dirname(stride.__file__)

#: a ``.get("key", ...)`` call with a second argument, somewhere in a file's text
_GET_WITH_DEFAULT = re.compile(r"\.get\(\s*[\"'][\w.]+[\"']\s*,")

#: reads allowed to keep a fallback, each with why: ``"path/from/stride:key"``
ALLOWED: Dict[str, str] = {}


def _defaults(tree: Mapping[str, object], prefix: str = "") -> Set[str]:
    """Dotted keys of a declaration that have a default (not ``REQUIRED``)."""
    out: Set[str] = set()
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):  # a section (an empty one takes any keys): its keys, not itself
            out |= _defaults(value, dotted + ".")
        elif not (value == REQUIRED or (isinstance(value, Setting) and value.default == REQUIRED)):
            out.add(dotted)
    return out


def _common(prefix: str, trees: List[Mapping[str, object]]) -> Set[str]:
    """Keys with a default in every declaration of a kind, prefixed with the kind's section."""
    sets = [_defaults(t) for t in trees]
    common = set.intersection(*sets) if sets else set()
    return {f"{prefix}{k}" for k in common}


def always_declared() -> Set[str]:
    """Absolute dotted keys that every compiled config holds with a declared default."""
    import_components()
    keys = _defaults(ExperimentConfig.declaration())
    keys |= {f"env.{k}" for k in _defaults(EnvPipelineConfig.declaration())}
    keys |= _common("policy.", [declaration(POLICY_REGISTRY.get(n)) for n in POLICY_REGISTRY.names()])
    for registry in ALL_REGISTRIES:
        if registry.section is not None:
            keys |= _common(registry.section.path + ".", [declaration(registry.get(n)) for n in registry.names()])
    return keys


#: a name bound to a config in the function being read: its keys below the root, and whether the
#: root is ``self._cfg``
Aliases = Dict[str, Tuple[List[str], bool]]


def _root(node: ast.expr, aliases: Aliases) -> Optional[Tuple[List[str], bool]]:
    if isinstance(node, ast.Name):
        if node.id in aliases:
            return aliases[node.id]
        return ([], False) if node.id in ("cfg", "config") or node.id.endswith("_cfg") else None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
            and node.attr in ("_cfg", "cfg"):
        return [], True
    return None


def config_path(node: ast.expr, aliases: Optional[Aliases] = None) -> Optional[Tuple[List[str], bool]]:
    """The keys from a config root down to ``node`` and whether that root is ``self._cfg`` (None:
    ``node`` is not a config)."""
    aliases = aliases or {}
    root = _root(node, aliases)
    if root is not None:
        return list(root[0]), root[1]
    inner: Optional[ast.expr] = None
    key: Optional[str] = None
    if isinstance(node, ast.Attribute):
        inner, key = node.value, node.attr
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        inner, key = node.value, node.slice.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args \
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        inner, key = node.func.value, node.args[0].value
    elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        inner = node.values[0]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and len(node.args) == 1:
        inner = node.args[0]
    if inner is None:
        return None
    base = config_path(inner, aliases)
    if base is None:
        return None
    return (base[0] + [key] if key is not None else base[0]), base[1]


def _subclasses(cls: type) -> List[type]:
    return [cls] + [s for sub in cls.__subclasses__() for s in _subclasses(sub)]


def _class_defaults(module: str, cls_name: str) -> Optional[Set[str]]:
    """The keys with defaults in the declaration of ``module.cls_name`` and of every subclass of it
    (its code runs for them too: IMPALA inherits PPO's but declares no ``value_norm``); None: it
    declares no config."""
    try:
        cls = getattr(importlib.import_module(module), cls_name)
    except (ImportError, AttributeError):  # an optional extra, or a class made at runtime
        return None
    if not callable(getattr(cls, "declared_config", None)):
        return None
    return set.intersection(*(_defaults(declaration(c)) for c in _subclasses(cls)))


class _Scan(ast.NodeVisitor):
    def __init__(self, module: str, always: Set[str]) -> None:
        self.module, self.always = module, always
        self.classes: List[str] = []
        self.aliases: List[Aliases] = [{}]
        self.found: List[Tuple[int, str, str]] = []  # line, dotted key, what declares it

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append(node.name)
        self.generic_visit(node)
        self.classes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.aliases.append({})
        self.generic_visit(node)
        self.aliases.pop()

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        path = config_path(node.value, self.aliases[-1])
        if path is not None and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            self.aliases[-1][node.targets[0].id] = path

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "get" and len(node.args) == 2
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            return
        found = config_path(func.value, self.aliases[-1])
        if found is None:
            return
        path, own_cfg = found
        dotted = ".".join(path + [node.args[0].value])
        if self.classes and own_cfg:
            own = _class_defaults(self.module, self.classes[-1])
            if own is not None:
                if dotted in own:
                    self.found.append((node.lineno, dotted, f"{self.classes[-1]}.declared_config()"))
                return
        # a bare ``cfg`` is read as the whole config; one with keys below it as any section ending so
        match = next((k for k in sorted(self.always) if k == dotted or (path and k.endswith("." + dotted))), None)
        if match is not None:
            self.found.append((node.lineno, dotted, match))


def restated_defaults() -> Iterator[str]:
    always = always_declared()
    for folder, _, files in os.walk(ROOT):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, os.path.dirname(ROOT))
            module = rel[:-3].replace(os.sep, ".").removesuffix(".__init__")
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if not _GET_WITH_DEFAULT.search(text):  # (parse only the files that could hold one)
                continue
            tree = ast.parse(text, path)
            scan = _Scan(module, always)
            scan.visit(tree)
            for line, dotted, where in scan.found:
                if f"{rel}:{dotted.rsplit('.', 1)[-1]}" not in ALLOWED:
                    yield f"{rel}:{line}: .get({dotted.rsplit('.', 1)[-1]!r}, ...) re-states the default of {where}"


def test_no_config_get_restates_a_declared_default() -> None:
    found = list(restated_defaults())
    assert not found, "read these keys plainly (the compiled config holds them):\n" + "\n".join(found)


def test_the_scan_tells_configs_from_other_dicts() -> None:
    def paths(src: str) -> List[Optional[Tuple[List[str], bool]]]:
        return [config_path(n.func.value) for n in ast.walk(ast.parse(src))
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get"]

    assert paths("cfg.policy.learn.get('multi_gpu', False)") == [(["policy", "learn"], False)]
    assert paths("(cfg.policy.get('collect') or {}).get('unroll_len', 1)")[0] == (["policy", "collect"], False)
    assert paths("self._cfg.get('model', {}).get('type', name)")[0] == (["model"], True)
    assert paths("state.get('train_iter', 0)") == [None]
    assert paths("info.get('terminated', False)") == [None]
    assert paths("self._policy.get('x', 1)") == [None]
    scan = _Scan("m", {"policy.learn.multi_gpu"})
    scan.visit(ast.parse("def f(cfg):\n    learn = cfg.policy.learn\n    return learn.get('multi_gpu', False)\n"))
    assert [(line, key) for line, key, _ in scan.found] == [(3, "policy.learn.multi_gpu")]  # through an alias
    assert "policy.learn.multi_gpu" in always_declared()
    assert "policy.collect.unroll_len" not in always_declared()  # declared by some policies only
