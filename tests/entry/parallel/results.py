"""Checks of a ``-m parallel`` run's ``result.json`` shared by the tests that make such runs (and by
tests/docs, whose ray.md page makes one)."""

from __future__ import annotations


def check_ratio_bounds(result: dict) -> None:
    """What the replay ratio's limiter guarantees, by counts: the learner never ahead of
    ``replay_ratio x (env steps - learn_start)``, the collectors at most their tolerance (and the
    collects in flight when held) ahead of it."""
    ratio, start, tolerance = result["replay_ratio"], result["learn_start"], result["replay_tolerance"]
    owed = ratio * (result["env_step"] - start)
    assert result["train_iter"] <= owed + 1e-9
    assert result["train_iter"] >= ratio * (result["env_step"] - start - 2 * tolerance)
    assert result["forced_collects"] == 0
