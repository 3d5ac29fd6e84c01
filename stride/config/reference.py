"""The config reference: every declared key of every registered component, with its valid values,
default and meaning, as Markdown (the documentation's ``reference/config.md``).

Values come from the declarations ``compile_config`` validates against (``declared_config``:
:class:`~stride.config.setting.Setting` leaves and plain defaults); meanings from the comment
lines written above each key in the declaring source (``# (int) ...`` in a ``config = dict(...)``,
``#: (int) ...`` above a :class:`~stride.config.view.ConfigView` field). The page is generated, so
it cannot drift from what the compiler accepts; DI-engine's and Tianshou's documentation list
config keys by hand.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Type

from ..utils.registry import (ENV_MANAGER_REGISTRY, ENV_REGISTRY, POLICY_REGISTRY, Registry, BUFFER_REGISTRY,
                              COLLECTOR_REGISTRY, EVALUATOR_REGISTRY, LEARNER_REGISTRY, LEAGUE_REGISTRY,
                              REWARD_MODEL_REGISTRY, import_components)
from .setting import REQUIRED, Setting
from .view import ConfigView, sections_of


def _comment_above(lines: Sequence[str], lineno: int) -> str:
    """The ``#`` / ``#:`` comment lines directly above line ``lineno`` (1-based), joined."""
    out: List[str] = []
    i = lineno - 2
    while i >= 0 and lines[i].strip().startswith("#"):
        out.append(lines[i].strip().lstrip("#").lstrip(":").strip())
        i -= 1
    return " ".join(reversed(out))


def _dict_comments(call: ast.expr, lines: Sequence[str], prefix: str) -> Iterator[Tuple[str, str]]:
    """``(dotted key, comment)`` of a ``dict(key=..., section=dict(...))`` declaration."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "dict"):
        return
    group, last_line = "", -1
    for kw in call.keywords:
        if kw.arg is None:
            continue
        # a key on the line right after the previous one, with no comment of its own, shares its
        # comment (``target_update_freq=..., target_theta=...`` under one)
        text = _comment_above(lines, kw.lineno) or (group if kw.lineno == last_line + 1 else "")
        if text:
            yield prefix + kw.arg, text
        group, last_line = text, (kw.end_lineno or kw.lineno)
        yield from _dict_comments(kw.value, lines, f"{prefix}{kw.arg}.")


def node_value(node: ast.stmt) -> Optional[ast.expr]:
    """The value an assignment statement assigns (None for other statements)."""
    return node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None


def comments_of(cls: Type[object], prefix: str = "") -> Dict[str, str]:
    """The comment written above each key ``cls`` declares (its ``config = dict(...)`` or its
    view's fields, nested sections included), over its bases' (a subclass's comment wins)."""
    found: Dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or klass.__module__ == "builtins":
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        lines = source.splitlines()
        group, last_line = "", -1
        body = ast.parse(source).body[0]
        if not isinstance(body, ast.ClassDef):
            continue
        for node in body.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            if node_value(node) is not None and any(isinstance(t, ast.Name) and t.id == "config" for t in targets):
                found.update(_dict_comments(node_value(node), lines, prefix))  # type: ignore[arg-type]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                text = _comment_above(lines, node.lineno) or (group if node.lineno == last_line + 1 else "")
                if text:
                    found[prefix + node.target.id] = text
                group, last_line = text, (node.end_lineno or node.lineno)
        view = klass.__dict__.get("config_view")
        if isinstance(view, type) and issubclass(view, ConfigView):
            found.update(comments_of(view, prefix))
        if isinstance(klass, type) and issubclass(klass, ConfigView):
            for name, section in sections_of(klass).items():
                found.update(comments_of(section, f"{prefix}{name}."))
    return found


def _leaves(tree: Mapping[str, object], prefix: str = "") -> Iterator[Tuple[str, object]]:
    for k, v in tree.items():
        if isinstance(v, Mapping) and not isinstance(v, Setting):
            yield from _leaves(v, f"{prefix}{k}.")  # an empty section lists nothing
        else:
            yield prefix + k, v


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(value: object) -> str:
    if value == REQUIRED:
        return "**required**"
    return f"`{value!r}`"


def rows_of(cls: Type[object]) -> List[Tuple[str, str, str, str]]:
    """``(key, valid values, default, meaning)`` of every key ``cls.declared_config()`` declares."""
    declared = getattr(cls, "declared_config", None)
    if declared is None:
        return []
    comments = comments_of(cls)
    rows = []
    for key, value in _leaves(declared()):
        if isinstance(value, Setting):
            rows.append((key, value.describe(), _default(value.default), comments.get(key, "")))
        else:
            rows.append((key, "", _default(value), comments.get(key, "")))
    return rows


def _table(rows: Sequence[Tuple[str, str, str, str]]) -> List[str]:
    out = ["| key | valid values | default | meaning |", "| --- | --- | --- | --- |"]
    out += [f"| `{k}` | {_cell(v)} | {_cell(d)} | {_cell(m)} |" for k, v, d, m in rows]
    return out


#: the registries the reference lists, with where their keys sit in a compiled config
SECTIONS: Tuple[Tuple[Registry[Callable[..., object]], str], ...] = (
    (POLICY_REGISTRY, "policy"), (ENV_REGISTRY, "env"), (ENV_MANAGER_REGISTRY, "env.manager"),
    (BUFFER_REGISTRY, "policy.other.replay_buffer"), (COLLECTOR_REGISTRY, "policy.collect.collector"),
    (LEARNER_REGISTRY, "policy.learn.learner"), (EVALUATOR_REGISTRY, "policy.eval.evaluator"),
    (REWARD_MODEL_REGISTRY, "reward_model"), (LEAGUE_REGISTRY, "league"),
)


def reference_markdown() -> str:
    """The whole reference page: the top-level and pipeline keys, then one table per registered
    component, by registry."""
    from .compile import EnvPipelineConfig, ExperimentConfig

    import_components()
    for registry, _ in SECTIONS:  # the zoo's own components too, whatever this process imported before
        registry.load_plugins()
    out = ["# Config reference", "",
           "Generated from the declarations `compile_config` validates against (`python -m "
           "stride.config.reference > docs/reference/config.md`); a test keeps this page equal to them. "
           "A key's *valid values* are what the compiler accepts; a wrong one is refused in one line naming "
           "the valid choices.", ""]
    for title, view, where in (("Top level", ExperimentConfig, ""), ("The env section's pipeline keys", EnvPipelineConfig, "env.")):
        out += [f"## {title}", "", f"Keys at `{where or '(top)'}` of every config.", ""]
        out += _table([(f"{where}{k}", v, d, m) for k, v, d, m in rows_of(_Declared.of(view))]) + [""]
    for registry, where in SECTIONS:
        kinds = registry.kind.capitalize()
        out += [f"## {kinds[:-1] + 'ies' if kinds.endswith('y') else kinds + 's'}", "", f"Under `{where}`; the type is chosen by `{where}.type` "
                f"(or `create_config`).", ""]
        for name in registry.names():
            component = registry.get(name)
            # Stride's own components (not one a user's code or a test registered in this process)
            ours = isinstance(component, type) and component.__module__.split(".")[0] == "stride"
            rows = rows_of(component) if isinstance(component, type) and ours else []
            if rows:
                out += [f"### `{name}`", ""] + _table(rows) + [""]
    return "\n".join(out).rstrip() + "\n"


class _Declared:
    """A declaring class for a bare :class:`ConfigView` (its fields are its declaration)."""

    @staticmethod
    def of(view: Type[ConfigView]) -> type:
        return type(view.__name__, (view,), {"declared_config": classmethod(lambda cls: view.declaration())})


if __name__ == "__main__":  # pragma: no cover
    print(reference_markdown(), end="")
