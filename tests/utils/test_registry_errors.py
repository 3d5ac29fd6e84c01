"""stride.utils.registry and stride.utils.errors: unknown names fail with the closest name and the choices."""

from __future__ import annotations

import pytest

from stride.utils.errors import (
    ConfigError, InvalidActionError, StrideError, UnknownNameError, closest, unknown_name_message,
)
from stride.utils.registry import (
    BUFFER_REGISTRY, COLLECTOR_REGISTRY, ENV_MANAGER_REGISTRY, ENV_REGISTRY, MODEL_REGISTRY, POLICY_REGISTRY,
    WRAPPER_REGISTRY, Registry,
)


class Foo:
    def __init__(self, a, b=2):
        self.a, self.b = a, b


class Bar:
    pass


def test_register_get_build_names_contains():
    r = Registry("thing")
    assert r.register("foo", Foo) is Foo

    @r.register("bar")
    class _B(Bar):
        pass

    assert r.get("foo") is Foo and r.get("bar") is _B
    obj = r.build("foo", 1, b=3)
    assert isinstance(obj, Foo) and (obj.a, obj.b) == (1, 3)
    assert r.names() == ["bar", "foo"] and list(r) == ["bar", "foo"]
    assert "foo" in r and "baz" not in r
    assert "thing" in repr(r)


def test_register_same_object_twice_is_idempotent_other_object_refused():
    r = Registry("thing")
    r.register("foo", Foo)
    r.register("foo", Foo)
    with pytest.raises(ValueError, match="'foo' is already registered"):
        r.register("foo", Bar)
    assert r.get("foo") is Foo


def test_unknown_name_error_has_closest_and_choices():
    r = Registry("policy")
    for n in ("dqn", "ppo", "sac"):
        r.register(n, Foo)
    with pytest.raises(UnknownNameError) as e:
        r.get("dqm")
    msg = str(e.value)
    assert msg == "unknown policy 'dqm' (did you mean 'dqn'?); valid choices: dqn, ppo, sac"
    # a user error: catchable as ConfigError / StrideError / KeyError, message not quoted like KeyError's
    assert isinstance(e.value, ConfigError) and isinstance(e.value, StrideError) and isinstance(e.value, KeyError)
    with pytest.raises(UnknownNameError, match="valid choices: dqn, ppo, sac"):
        r.build("nothing_like_it")


def test_unknown_unhashable_name():
    r = Registry("env")
    r.register("cartpole", Foo)
    with pytest.raises(UnknownNameError, match="valid choices: cartpole"):
        r.get(["cartpole"])


def test_global_registries_are_filled_and_report_choices():
    import stride.data  # noqa: F401  (fills the registries)
    import stride.envs  # noqa: F401
    import stride.model  # noqa: F401
    import stride.policy  # noqa: F401
    import stride.worker  # noqa: F401

    assert "dqn" in POLICY_REGISTRY and "dqn" in MODEL_REGISTRY
    assert "gymnasium" in ENV_REGISTRY and "base" in ENV_MANAGER_REGISTRY
    assert "naive" in BUFFER_REGISTRY and {"sample", "episode"} <= set(COLLECTOR_REGISTRY.names())
    assert {"base", "argmax_sample", "multinomial_sample", "eps_greedy_sample", "hidden_state", "target"} <= set(
        WRAPPER_REGISTRY.names())
    with pytest.raises(UnknownNameError, match=r"unknown replay buffer 'naiv' \(did you mean 'naive'\?\); valid choices: .*naive"):
        BUFFER_REGISTRY.get("naiv")


def test_closest():
    assert closest("lern", ["learn", "collect", "eval"]) == "learn"
    assert closest("xyz", ["learn", "collect"]) is None
    assert closest("stop_valu", iter(["stop_value", "n_evaluator_episode"])) == "stop_value"


def test_unknown_name_message_without_close_match_sorts_choices():
    msg = unknown_name_message("env", "zzz", ["pendulum", "cartpole"])
    assert msg == "unknown env 'zzz'; valid choices: cartpole, pendulum"


def test_error_hierarchy():
    assert issubclass(InvalidActionError, StrideError) and issubclass(InvalidActionError, ValueError)
    assert issubclass(ConfigError, ValueError)


def test_registry_imports_its_package_on_first_lookup(tmp_path, monkeypatch):
    pkg = tmp_path / "stride_fake_plugin"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from tests.utils.test_registry_errors import LAZY\nLAZY.register('lazy', int)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert LAZY.get("lazy") is int  # the package was imported by the lookup
    assert LAZY.names() == ["lazy"]
    with pytest.raises(UnknownNameError, match="unknown plugin 'lazzy'"):
        LAZY.get("lazzy")


LAZY = Registry("plugin", "stride_fake_plugin")


def test_builtin_registries_fill_themselves():
    from stride.utils.registry import EVALUATOR_REGISTRY, LEARNER_REGISTRY
    from stride.worker import BaseLearner, BaseSerialEvaluator

    assert LEARNER_REGISTRY.get("base") is BaseLearner and EVALUATOR_REGISTRY.get("base") is BaseSerialEvaluator
    assert "dqn" in POLICY_REGISTRY and "dqn" in MODEL_REGISTRY
