"""Search spaces as data (``stride.config.search``): bounds checked, keys checked against the policy's
config, and every space a registered policy declares names settings its config has."""

from __future__ import annotations

import pytest

from stride.config.compile import default_main_config
from stride.config.search import Choice, FloatRange, IntRange, check_search_space
from stride.config.setting import plain
from stride.policy.base_policy import Policy
from stride.utils.errors import ConfigError
from stride.utils.registry import POLICY_REGISTRY


@pytest.mark.parametrize("make,match", [
    (lambda: FloatRange(1.0, 1.0), r"finite low < high, got \[1.0, 1.0\]"),
    (lambda: FloatRange(2.0, 1.0), r"finite low < high"),
    (lambda: FloatRange(0.0, 1.0, log=True), r"log search range needs low > 0, got \[0.0, 1.0\]"),
    (lambda: FloatRange(float("nan"), 1.0), r"finite low < high"),
    (lambda: IntRange(1, 8.5), r"IntRange bounds must be ints, got 1, 8.5"),  # type: ignore[arg-type]
    (lambda: Choice(), r"Choice needs at least one value"),
])
def test_bad_ranges_are_one_line_errors(make, match):
    with pytest.raises(ConfigError, match=match):
        make()


def test_choice_keeps_its_values_in_order():
    assert Choice(32, 64, None).values == (32, 64, None)


def test_a_choice_of_layer_lists_stores_text_labels_and_decodes_copies():
    c = Choice([64], [64, 64], 0.5, None)
    assert c.labels == ("[64]", "[64, 64]", 0.5, None)  # what Optuna's storages can keep
    value = c.decode("[64, 64]")
    assert value == [64, 64]
    value.append(1)  # a copy: the choice is untouched
    assert c.values[1] == [64, 64] and c.decode(0.5) == 0.5 and c.decode(None) is None
    assert c.encode((64, 64)) == "[64, 64]" and (64,) in c  # a tuple is the list of the same items
    assert c.encode([32]) is None and [32] not in c and None in c and 1 not in Choice(True, False)
    with pytest.raises(ConfigError, match=r"'\[32\]' is not a label of this choice; labels: '\[64\]', '\[64, 64\]', 0.5, None"):
        c.decode("[32]")
    with pytest.raises(ConfigError, match=r"Choice values must differ, got \[\[64\], \(64,\)\]"):
        Choice([64], (64,))


def test_a_key_the_config_lacks_is_named():
    cfg = {"learn": {"learning_rate": 1e-3}, "nstep": 1}
    check_search_space({"learn.learning_rate": FloatRange(1e-4, 1e-2, log=True), "nstep": IntRange(1, 3)}, cfg, "x")
    with pytest.raises(ConfigError, match=r"search space of policy 'x': 'policy.learn.lr' is not a setting"):
        check_search_space({"learn.lr": FloatRange(1e-4, 1e-2)}, cfg, "x")


def test_every_declared_space_names_settings_of_its_policy():
    """Against the policy section a run compiles (the model's keyword defaults included: a space
    may search ``model.encoder_hidden_size_list``)."""
    declared = []
    for name in POLICY_REGISTRY.names():
        cls = POLICY_REGISTRY.get(name)
        if isinstance(cls, type) and issubclass(cls, Policy) and cls.search_space:
            check_search_space(cls.search_space, plain(default_main_config({"policy": {"type": name}})["policy"]), name)
            declared.append(name)
    assert "dqn" in declared
    with pytest.raises(ConfigError, match="'policy.model.encoder_hidden_size_list' is not a setting"):
        check_search_space(POLICY_REGISTRY.get("dqn").search_space, POLICY_REGISTRY.get("dqn").default_config().to_dict(), "dqn")
