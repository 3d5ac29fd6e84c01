"""Typed config views: one declaration that both the compiler and the constructor read."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass
from typing import Dict, List, Optional

import pytest

from stride.config import REQUIRED, Config, Configurable, ConfigView, Setting, merge_config, setting, subsection
from stride.config.view import declared, fixed, sections_of
from stride.rl_utils.schedule import Scheduled
from stride.utils.errors import ConfigError
from stride.utils.registry import ENV_REGISTRY, LEAGUE_REGISTRY, REWARD_MODEL_REGISTRY, import_components


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


@dataclass(frozen=True)
class _Base(ConfigView):
    kind: str = declared(REQUIRED)
    rate: float = setting(1e-3, "(0, inf)")
    presets: Dict[str, object] = declared(dict(size=10, keep=True))
    steps: int = fixed(1)  # read by the base's code; a subclass may declare it


@dataclass(frozen=True)
class _Derived(_Base):
    kind: str = "derived"
    rate: float = 0.5  # a plain default over the parent's Setting keeps its range
    presets: Dict[str, object] = declared(dict(size=20))
    extra: bool = True
    steps: int = setting(3, "[1, inf)")


def test_a_subclass_updates_its_parents_declaration_as_nested_dicts_did() -> None:
    base, derived = _Base.declaration(), _Derived.declaration()
    assert list(base) == ["kind", "rate", "presets"] and base["kind"] == REQUIRED  # a fixed field is no setting
    assert list(derived) == ["kind", "rate", "presets", "extra", "steps"]  # keys new to the subclass come last
    rate = derived["rate"]
    assert isinstance(rate, Setting) and rate.default == 0.5 and rate.text == "(0, inf)"
    assert derived["presets"] == {"size": 20, "keep": True}  # a dict of presets is updated key by key
    with pytest.raises(ConfigError, match=r"'rate' must be a number in \(0, inf\)"):
        merge_config(derived, {"rate": 0.0})


def test_a_fixed_field_is_read_as_its_value_until_a_subclass_declares_it() -> None:
    view = _Base.from_config({"kind": "k", "rate": 1.0, "presets": {}}, "p.")
    assert view.steps == 1
    derived = _Derived.from_config(merge_config(_Derived.declaration(), {"steps": 5.0}))
    assert derived.steps == 5 and type(derived.steps) is int


def test_a_setting_field_may_take_a_setting_such_as_a_schedule() -> None:
    @dataclass(frozen=True)
    class _Sched(ConfigView):
        lr: object = setting(Scheduled(1e-3, "(0, inf)"))

    declared_lr = _Sched.declaration()["lr"]
    assert isinstance(declared_lr, Scheduled)
    merged = merge_config(_Sched.declaration(), {"lr": {"type": "linear", "start": 1e-3, "end": 0.0, "steps": 10}})
    assert _Sched.from_config(merged).lr == {"type": "linear", "start": 1e-3, "end": 0.0, "steps": 10}


def test_sections_of_names_each_nested_view() -> None:
    assert sections_of(_View) == {"inner": _Inner} and sections_of(_Inner) == {}


def test_strides_envs_reward_models_and_leagues_declare_their_config_as_views() -> None:
    import_components()
    for registry in (ENV_REGISTRY, REWARD_MODEL_REGISTRY, LEAGUE_REGISTRY):
        registry.load_plugins()
        for name in registry.names():
            cls = registry.get(name)
            if not (isinstance(cls, type) and cls.__module__.startswith("stride.")):
                continue  # a component a test registered
            as_dicts = [k.__name__ for k in cls.__mro__ if "declared_config" in vars(k) and k is not Configurable]
            assert not as_dicts, f"{registry.kind} '{name}': {as_dicts} declare a dict, not a ConfigView"
            view = getattr(cls, "config_view")
            assert issubclass(view, ConfigView) and cls.declared_config().keys() == view.declaration().keys()
