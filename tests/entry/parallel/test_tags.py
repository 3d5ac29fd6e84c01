"""Batch tags and the replay's ledger: duplicates dropped, gaps counted, staleness (no Ray)."""

from __future__ import annotations

import pytest

from stride.entry.parallel.tags import BatchTag, TagLedger, Verdict
from stride.utils.errors import StrideError


def tag(name: str, inc: int, seq: int, it: int = 0) -> BatchTag:
    return BatchTag(name, inc, seq, it)


def test_in_order_batches_are_stored_once_each():
    ledger = TagLedger()
    assert [ledger.admit(tag("c0", 0, s)) for s in range(3)] == [Verdict(True, 0)] * 3
    assert ledger.admit(tag("c0", 0, 1)) == Verdict(False, 0)  # a retried call delivering batch 1 again
    assert ledger.admit(tag("c0", 0, 2)) == Verdict(False, 0)
    assert ledger.summary() == {"stored": 3, "duplicates": 2, "gaps": 0, "stale_incarnation": 0}


def test_a_jump_counts_the_skipped_batches_and_a_late_one_fills_its_gap():
    ledger = TagLedger()
    ledger.admit(tag("c0", 0, 0))
    assert ledger.admit(tag("c0", 0, 4)) == Verdict(True, 3)  # 1, 2, 3 missing
    assert ledger.gaps == 3
    assert ledger.admit(tag("c0", 0, 2)) == Verdict(True, -1)  # arrives late: stored, gap closes
    assert ledger.gaps == 2
    assert ledger.admit(tag("c0", 0, 2)) == Verdict(False, 0)  # and only once
    assert ledger.summary()["stored"] == 3


def test_collectors_are_counted_apart_and_a_first_batch_above_zero_is_a_gap():
    ledger = TagLedger()
    ledger.admit(tag("c0", 0, 0))
    assert ledger.admit(tag("c1", 0, 2)) == Verdict(True, 2)  # c1's batches 0 and 1 never came
    assert ledger.admit(tag("c0", 0, 1)) == Verdict(True, 0)
    assert ledger.gaps == 2


def test_a_new_incarnation_restarts_numbering_and_refuses_the_old_one():
    ledger = TagLedger()
    for s in range(5):
        ledger.admit(tag("c0", 0, s))
    assert ledger.admit(tag("c0", 1, 0)) == Verdict(True, 0)  # restarted collector: seq from 0 again
    assert ledger.admit(tag("c0", 0, 5)) == Verdict(False, 0)  # a late batch of the dead incarnation
    assert ledger.admit(tag("c0", 1, 1)) == Verdict(True, 0)
    assert ledger.summary() == {"stored": 7, "duplicates": 0, "gaps": 0, "stale_incarnation": 1}


def test_state_round_trip_resumes_the_counting():
    ledger = TagLedger()
    for s in (0, 1, 3):
        ledger.admit(tag("c0", 2, s))
    restored = TagLedger()
    restored.load_state_dict(ledger.state_dict())
    assert restored.summary() == ledger.summary() == {"stored": 3, "duplicates": 0, "gaps": 1, "stale_incarnation": 0}
    assert restored.admit(tag("c0", 2, 3)) == Verdict(False, 0)
    assert restored.admit(tag("c0", 2, 6)) == Verdict(True, 2)  # batches taken after a snapshot count as lost
    assert restored.admit(tag("c0", 2, 2)) == Verdict(True, -1)


def test_staleness_is_learner_iterations_behind():
    assert tag("c0", 0, 0, it=40).staleness(52) == 12
    assert tag("c0", 0, 0, it=52).staleness(52) == 0


def test_negative_numbers_are_refused():
    with pytest.raises(StrideError, match="negative"):
        TagLedger().admit(tag("c0", 0, -1))


def test_a_replaced_incarnations_missing_batches_stay_counted():
    """A collector replaced (or a resumed run's new collectors) does not bring back what its former
    incarnation lost: ``gaps`` never goes back, through a snapshot too."""
    ledger = TagLedger()
    ledger.admit(tag("c0", 0, 0))
    ledger.admit(tag("c0", 0, 3))  # 1 and 2 lost
    assert ledger.admit(tag("c0", 1, 0)) == Verdict(True, 0) and ledger.gaps == 2
    assert ledger.incarnations() == {"c0": 1}
    restored = TagLedger()
    restored.load_state_dict(ledger.state_dict())
    assert restored.gaps == 2 and restored.incarnations() == {"c0": 1}
    restored.admit(tag("c0", 2, 1))  # batch 0 of incarnation 2 lost too
    assert restored.gaps == 3
