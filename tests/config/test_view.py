"""Typed config views: one declaration that both the compiler and the constructor read."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass
from typing import List, Optional

import pytest

from stride.config import Config, Configurable, ConfigView, Setting, setting, subsection
from stride.utils.errors import ConfigError


@dataclass(frozen=True)
class _Inner(ConfigView):
    every: int = setting(10, "[1, inf)")


@dataclass(frozen=True)
class _View(ConfigView):
    rate: float = setting(1e-3, "(0, inf)")
    mode: str = setting("a", ("a", "b"))
    limit: Optional[float] = setting(None, "[0, inf]")
    flag: bool = False
    sizes: List[int] = setting([1, 2], "[1, inf)")
    inner: _Inner = subsection(_Inner)


class _Component(Configurable):
    config_view = _View

    def __init__(self, cfg: Optional[Config] = None) -> None:
        self.cfg = self.typed_config(_View, cfg, prefix="x.")


def test_the_declaration_is_the_views_fields() -> None:
    declared = _Component.declared_config()
    assert list(declared) == ["rate", "mode", "limit", "flag", "sizes", "inner"]
    assert isinstance(declared["rate"], Setting) and declared["flag"] is False
    assert isinstance(declared["inner"], dict) and isinstance(declared["inner"]["every"], Setting)
    assert _Component.default_config() == {"rate": 1e-3, "mode": "a", "limit": None, "flag": False, "sizes": [1, 2],
                                           "inner": {"every": 10}}


def test_the_constructor_reads_a_typed_frozen_view() -> None:
    c = _Component(Config(rate=0.5, inner=dict(every=1e3)))
    assert c.cfg == _View(rate=0.5, inner=_Inner(every=1000))
    assert type(c.cfg.inner.every) is int  # an int key given as 1e3 reads as an int
    with pytest.raises(FrozenInstanceError):
        c.cfg.rate = 1.0  # type: ignore[misc]


def test_bad_values_are_one_line_naming_the_key() -> None:
    with pytest.raises(ConfigError, match=r"x\.mode.*valid choices: a, b"):
        _Component(Config(mode="c"))
    with pytest.raises(ConfigError, match=r"unknown config key 'x\.rat'.*did you mean 'x\.rate'"):
        _Component(Config(rat=1.0))
    with pytest.raises(ConfigError, match=r"x\.inner\.every"):
        _Component(Config(inner=dict(every=0)))


def test_a_view_read_from_an_unmerged_config_names_the_missing_key() -> None:
    with pytest.raises(ConfigError, match="'rate' is missing"):
        _View.from_config({"mode": "a"})


def test_a_component_whose_view_is_not_the_kind_it_reads_is_refused() -> None:
    class _Other(Configurable):
        config_view = _Inner

        def __init__(self) -> None:
            self.cfg = self.typed_config(_View, None)

    with pytest.raises(TypeError, match="_Other.config_view is _Inner, not a _View"):
        _Other()
