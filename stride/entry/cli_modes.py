"""What a ``stride -m`` mode is: a row of the command's table (:data:`stride.entry.cli.MODES`), the
flags it takes, and the config it is handed once read."""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, List, Mapping, NamedTuple, Optional, Tuple

#: how a mode is given its config (shown as such in ``stride -h``)
ZOO, FILE, NONE = "-c CONFIG_FILE | -e ENV -p POLICY", "-c CONFIG_FILE", ""


class Loaded(NamedTuple):
    """A mode's config, read once: ``[main, create]`` (a ``FILE`` mode's: ``[main, create, system]``)
    with ``--set`` written in, and each seed with the name of its experiment folder."""

    config: List[Any]
    runs: List[Tuple[int, str]]


#: hands the flags and the loaded config (None: ``--resume``, or a mode that reads none) to the entry
Runner = Callable[["Mode", argparse.Namespace, Optional[Loaded]], int]


@dataclass(frozen=True)
class Mode:
    """One ``-m`` mode: the entry it calls and the flags it takes. ``stride -h``, the errors' valid
    choices and the dispatch all read :data:`~.cli.MODES`, so a mode is added (or given a flag) in one row."""

    name: str
    entry: str  # "module:function" (or a module) under stride.entry, imported when the run starts
    help: str  # one line of stride -h
    run: Runner  # how the flags and the loaded config are handed to the entry
    config: str = ZOO  # how the config is given: ZOO, FILE (with its system_config) or NONE
    takes: Tuple[str, ...] = ("--train-iter", "--env-step")  # which of MODE_FLAGS it takes
    seeds: bool = True  # several seeds (-s 0 1 2) run one after another; else one seed
    needs: Tuple[str, ...] = ()  # flags it cannot run without ("--load PATH (what it is)")
    why: Mapping[str, str] = field(default_factory=dict)  # flag -> why this mode takes none
    check: Optional[Callable[[argparse.Namespace], bool]] = None  # its own flags; False: -c is no config

    def entry_point(self) -> Any:
        """The entry's function (or module), imported now: torch and Ray load only once a run starts."""
        module, _, name = self.entry.partition(":")
        found = importlib.import_module(f"{__package__}.{module}")
        return getattr(found, name) if name else found

    def synopsis(self) -> str:
        """What ``stride -h`` lists under the mode: how its config is given and which flags it takes."""
        given = [self.config, *(need.split(" (")[0] for need in self.needs), "-s S [S ...]" if self.seeds else "-s S"]
        return ", ".join(part for part in (*given, *self.takes) if part)


#: the flags that only some modes take (Mode.takes), by their dest
MODE_FLAGS = {"--workers": "workers", "--resume": "resume", "--train-iter": "train_iter", "--env-step": "env_step"}
