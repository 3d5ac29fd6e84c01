"""The generated config reference: equal to the declarations, and every key's meaning taken from
the comment written above it."""

from pathlib import Path

from stride.config.reference import comments_of, reference_markdown, rows_of
from stride.policy.dqn import DQNPolicy
from stride.utils.registry import POLICY_REGISTRY
from stride.worker.evaluator import BaseSerialEvaluator

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "config.md"


def test_the_committed_page_is_what_the_declarations_generate():
    assert PAGE.read_text(encoding="utf-8") == reference_markdown(), (
        "docs/reference/config.md is stale: regenerate it with "
        "`python -m stride.config.reference > docs/reference/config.md`")


def test_meanings_come_from_the_comments_above_each_key_over_the_bases():
    comments = comments_of(DQNPolicy)
    assert comments["discount_factor"] == "(float) reward discount gamma."
    assert comments["learn.batch_size"] == "(int) samples per gradient step."
    assert comments["type"] == "(str) registered policy name."  # declared by the base class
    # a key on the line right after a commented one shares its comment
    assert comments["learn.target_theta"] == comments["learn.target_update_freq"] == comments["learn.target_update_type"]


def test_rows_give_valid_values_and_defaults_and_views_are_read_too():
    rows = {key: (valid, default) for key, valid, default, _ in rows_of(DQNPolicy)}
    assert rows["learn.batch_size"] == ("an integer in [1, inf)", "`64`")
    assert rows["learn.loss_type"] == ("one of: huber, mse", "`'mse'`")
    evaluator = {key: meaning for key, _, _, meaning in rows_of(BaseSerialEvaluator)}
    assert evaluator["eval_freq"].startswith("(int)")


def test_every_registered_policy_has_a_section():
    page = reference_markdown()
    for name in POLICY_REGISTRY.names():
        assert f"### `{name}`" in page
