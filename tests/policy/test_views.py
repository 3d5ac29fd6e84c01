"""stride.policy.views: each policy's config is its typed view -- the declaration ``compile_config``
merges over and the values the modes read are the same fields."""

from __future__ import annotations

import dataclasses
from typing import Mapping

import pytest

from stride.config import ConfigView, merge_config
from stride.policy.views import PolicyConfig
from stride.utils.registry import POLICY_REGISTRY

SMALL = {"collect": {"n_sample": 8}}


def _same(view: ConfigView, cfg: Mapping[str, object], declared: Mapping[str, object], where: str) -> None:
    """Every declared key of ``cfg`` is a field of ``view`` holding its value (sections recursively)."""
    fields = {f.name for f in dataclasses.fields(view)}
    assert set(declared) <= fields, f"{where}: declared keys without a view field: {sorted(set(declared) - fields)}"
    for key, sub in declared.items():
        value = getattr(view, key)
        if isinstance(value, ConfigView):
            assert isinstance(sub, Mapping)
            _same(value, cfg[key], sub, f"{where}{key}.")  # type: ignore[arg-type]
        else:
            assert value == cfg[key], f"{where}{key}: view {value!r} != config {cfg[key]!r}"


@pytest.mark.parametrize("name", POLICY_REGISTRY.names())
def test_every_policys_view_is_its_declaration_and_reads_its_values(name):
    cls = POLICY_REGISTRY.get(name)
    assert issubclass(cls.config_view, PolicyConfig) and "config" not in vars(cls)  # one declaration: the view
    user = {"collect": {"n_sample": 8, **({"data_path": "x"} if "data_path" in cls.declared_config()["collect"] else {})}}
    cfg = merge_config(cls.declared_config(), user, "policy.")
    _same(cls.config_view.from_config(cfg, "policy."), cfg, cls.declared_config(), "policy.")


def test_an_integral_float_reads_as_an_int_and_a_schedule_keeps_its_form():
    cls = POLICY_REGISTRY.get("dqn")
    eps = {"type": "linear", "start": 1.0, "end": 0.1, "steps": 100}
    cfg = merge_config(cls.declared_config(), {**SMALL, "learn": {"batch_size": 32.0}, "other": {"eps": eps}})
    view = cls.config_view.from_config(cfg, "policy.")
    assert type(view.learn.batch_size) is int and view.learn.batch_size == 32
    assert view.other.eps == eps
