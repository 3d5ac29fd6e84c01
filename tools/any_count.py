"""Count the public signatures of Stride's packages that use ``Any``.

    python tools/any_count.py [PACKAGE ...] [--list] [--max-percent P]

A signature is a public function, or a public method (``__init__`` and ``__call__`` included) of a
public class, defined in the package (not imported into it). It uses ``Any`` when ``typing.Any``
appears anywhere in a parameter's or the return's annotation once aliases are resolved
(``Dict[str, Any]`` counts, so do a bare ``dict``, ``*args: Any`` and a ``Callable`` taking ``Any``; the any-shape of
``npt.NDArray[T]`` does not), or when a parameter other than
``self``/``cls`` has no annotation. Prints the count per package and in all; with
``--max-percent`` exits 1 when the share is above it.
"""

from __future__ import annotations

import argparse
import collections.abc
import importlib
import inspect
import pkgutil
import sys
import typing
from types import ModuleType
from typing import Any, Callable, Iterator, List, Tuple

import numpy as np

#: the packages this count covers by default: every package of stride
DEFAULT_PACKAGES = ("stride.config", "stride.data", "stride.entry", "stride.envs", "stride.league", "stride.model", "stride.policy",
                    "stride.reward_model", "stride.rl_utils", "stride.testing", "stride.torch_utils", "stride.utils", "stride.worker",
                    "stride.zoo")


def _modules(package: str) -> Iterator[ModuleType]:
    pkg = importlib.import_module(package)
    yield pkg
    for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
        yield importlib.import_module(info.name)


def _public(name: str) -> bool:
    return not name.startswith("_") or name in ("__init__", "__call__")


def signatures(module: ModuleType) -> Iterator[Tuple[str, Callable[..., object]]]:
    """(qualified name, function) of every public signature defined in ``module``."""
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            yield f"{module.__name__}.{name}", obj
        elif inspect.isclass(obj):
            for attr, member in vars(obj).items():
                fn = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                if isinstance(fn, property):
                    fn = fn.fget
                if _public(attr) and inspect.isfunction(fn) and fn.__module__ == module.__name__:
                    yield f"{module.__name__}.{name}.{attr}", fn


#: containers that mean "of Any" when left without type arguments (``dict`` is ``dict[Any, Any]``)
_BARE_GENERICS = (dict, list, tuple, set, frozenset, type, collections.abc.Mapping, collections.abc.Sequence,
                  collections.abc.Iterable, collections.abc.Callable, typing.Dict, typing.List, typing.Tuple,
                  typing.Mapping, typing.Sequence, typing.Iterable, typing.Callable)


def _has_any(tp: object) -> bool:
    if isinstance(tp, (list, tuple)):  # a Callable's parameter list: Callable[[Dict[str, Any]], None]
        return any(_has_any(a) for a in tp)
    if tp is Any:
        return True
    if any(tp is g for g in _BARE_GENERICS):
        return True
    if isinstance(tp, str):  # an annotation that could not be resolved
        return "Any" in tp
    args = typing.get_args(tp)
    if typing.get_origin(tp) is np.ndarray and len(args) == 2:  # npt.NDArray[T]: any shape is its design
        args = args[1:]
    return any(_has_any(a) for a in args)


def uses_any(fn: Callable[..., object]) -> bool:
    """Whether ``fn``'s signature has ``Any`` in an annotation or an unannotated parameter."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # a name only imported under TYPE_CHECKING: read the raw strings
        hints = dict(getattr(fn, "__annotations__", {}))
    params = [p for p in inspect.signature(fn).parameters if p not in ("self", "cls")]
    if any(p not in hints for p in params):
        return True
    return any(_has_any(h) for h in hints.values())


def count(packages: List[str]) -> Tuple[int, int, List[str]]:
    """(signatures, signatures with Any, their names)."""
    total, with_any = 0, []
    for package in packages:
        for module in _modules(package):
            for qualname, fn in signatures(module):
                total += 1
                if uses_any(fn):
                    with_any.append(qualname)
    return total, len(with_any), with_any


def main(argv: List[str] | None = None) -> int:
    """Print the count; 1 when ``--max-percent`` is exceeded."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[1])
    p.add_argument("packages", nargs="*", default=list(DEFAULT_PACKAGES))
    p.add_argument("--list", action="store_true", help="print every signature that uses Any")
    p.add_argument("--max-percent", type=float, default=None)
    args = p.parse_args(argv)
    grand_total, grand_any = 0, 0
    for package in args.packages:
        total, n_any, names = count([package])
        grand_total, grand_any = grand_total + total, grand_any + n_any
        print(f"{package:24s} {n_any:4d} / {total:4d} public signatures use Any")
        if args.list:
            print("".join(f"    {n}\n" for n in names), end="")
    share = 100.0 * grand_any / max(grand_total, 1)
    print(f"{'all':24s} {grand_any:4d} / {grand_total:4d} = {share:.1f} %")
    return 1 if args.max_percent is not None and share > args.max_percent else 0


if __name__ == "__main__":
    sys.exit(main())
