"""The coordinator's counts (``Counters``): plain bookkeeping, no Ray, no clock."""

from __future__ import annotations

import logging

from stride.entry.parallel.counters import Counters
from stride.entry.parallel.tags import BatchTag, TagLedger


def _push(ledger: TagLedger, tag: BatchTag, pid: int = 1, restored: bool = False) -> dict:
    """What ``ReplayRole.push`` returns for ``tag``."""
    verdict = ledger.admit(tag)
    return {"admitted": verdict.store, "gap": verdict.gap, "restored": restored, "pid": pid, **ledger.summary()}


def test_counts_go_on_across_a_resume_and_report_columns_and_totals(caplog):
    log = logging.getLogger("test_counters")
    ledger = TagLedger()
    counts = Counters(log, None)
    with caplog.at_level(logging.WARNING, logger="test_counters"):
        counts.record(BatchTag("collector0", 0, 0, 0), _push(ledger, BatchTag("collector0", 0, 0, 0)), 3, 10)
        counts.record(BatchTag("collector0", 0, 2, 1), _push(ledger, BatchTag("collector0", 0, 2, 1)), 4, 20)  # seq 1 lost
        counts.record(BatchTag("collector0", 0, 2, 1), _push(ledger, BatchTag("collector0", 0, 2, 1)), 4, 20)  # again
        counts.record(BatchTag("collector1", 0, 0, 4), _push(ledger, BatchTag("collector1", 0, 0, 4), pid=2), 4, 30)
    warnings = [r.getMessage() for r in caplog.records]
    assert any("missing before seq 2" in w for w in warnings) and any("not stored" in w for w in warnings)
    assert any("replay actor was restarted (empty" in w for w in warnings)
    counts.lost_batches += 1
    assert counts.deaths("collector0") == 0
    counts.restarted("collector0", 0, 30, 4)
    assert counts.deaths("collector0") == 1 and counts.deaths("collector1") == 0
    state = counts.state_dict()
    assert state == {"batches": 4, "staleness_sum": 3 + 3 + 3 + 0, "staleness_max": 3, "lost_batches": 1,
                     "collector_restarts": [{"collector": "collector0", "incarnation": 0, "lost_batches": 1,
                                             "envstep": 30, "train_iter": 4}], "replay_restarts": 1,
                     "batches_by_collector": {"collector0": 3, "collector1": 1},
                     "stale_dropped": 0, "train_calls": 0, "replay_lost_batches": 2, "replay_lost_items": 0, "ledger": {},
                     "clocks": {"after_warmup_wall_seconds": 0.0, "learner_busy_seconds": 0.0,
                                "learner_idle_seconds": 0.0, "collector_wait_seconds": 0.0,
                                "after_warmup_env_steps": 0.0}}
    assert counts.columns(fresh=False) == {"staleness_mean": 9 / 4, "staleness_max": 3, "lost_batches": 1 + 1}
    assert counts.columns(fresh=True)["stale_dropped"] == 0

    resumed = Counters(log, None)  # a resumed run: its new batches add to the saved totals
    resumed.load_state_dict(state)
    resumed.record(BatchTag("collector0", 1, 0, 4), _push(TagLedger(), BatchTag("collector0", 1, 0, 4), pid=3), 9, 40)
    again = resumed.state_dict()
    assert again["batches"] == 5 and again["staleness_sum"] == 9 + 5 and again["staleness_max"] == 5
    assert again["lost_batches"] == 1 and again["collector_restarts"] == state["collector_restarts"]
    assert again["replay_restarts"] == 1  # its own replay process is the first it sees: no new restart
    totals = resumed.summary({"stored": 4, "duplicates": 1, "gaps": 1})
    assert totals["batches"] == 5 and totals["lost_batches"] == 2 and totals["staleness_mean"] == 14 / 5


def test_the_clocks_start_after_the_warm_up_and_count_train_calls():
    counts = Counters(logging.getLogger("test_counters"), None)
    counts.received(envstep=50, learn_start=100)
    assert counts.overlap(50, {})["after_warmup_env_steps"] == 0  # not warm yet: nothing timed
    counts.received(envstep=120, learn_start=100)
    counts.train_sent()
    counts.train_returned()
    counts.train_sent()
    counts.settle()
    out = counts.overlap(200, {"replay_ratio": 0.25})
    assert out["replay_ratio"] == 0.25 and out["after_warmup_env_steps"] == 80 and out["train_calls"] == 2
    assert out["after_warmup_wall_seconds"] >= out["learner_idle_seconds"] >= 0.0


def _fresh(ledger: TagLedger, tag: BatchTag, dropped: int) -> dict:
    """What ``LearnerRole.train_fresh`` returns for ``tag`` (its ledger and its stale count: this process's)."""
    return {**_push(ledger, tag), "stale_dropped": dropped, "staleness": 2}


def test_an_on_policy_resume_goes_on_counting_stale_unrolls_train_calls_clocks_and_the_ledger():
    """The on-policy learner's ledger and stale count start anew in a resumed run (a new actor):
    the saved counts add to them, as the train calls and the overlap clocks do."""
    log = logging.getLogger("test_counters")
    counts, ledger = Counters(log, None, fresh=True), TagLedger()
    counts.received(envstep=100, learn_start=0)
    for seq, dropped in enumerate([0, 1, 1]):
        tag = BatchTag("collector0", 0, seq, 0)
        out = _fresh(ledger, tag, dropped)
        counts.record(tag, out, 2, 100)
        counts.dropped(tag, out, 2, 1)
        counts.train_calls += 1
    counts.received(envstep=160, learn_start=0)
    counts.clocks["learner_busy_seconds"] = 1.5
    state = counts.state_dict()
    assert state["stale_dropped"] == 1 and state["train_calls"] == 3 and state["ledger"]["stored"] == 3
    assert state["clocks"]["after_warmup_env_steps"] == 60 and state["clocks"]["learner_busy_seconds"] == 1.5

    resumed, ledger = Counters(log, None, fresh=True), TagLedger()  # a new learner actor: its counts from 0
    resumed.load_state_dict(state)
    assert resumed.columns(fresh=True)["stale_dropped"] == 1
    tag = BatchTag("collector0", 0, 0, 0)  # the resumed run's collectors start at incarnation 0 again
    out = _fresh(ledger, tag, 1)
    resumed.record(tag, out, 5, 200)
    resumed.dropped(tag, out, 5, 1)
    resumed.train_calls += 1
    resumed.received(envstep=200, learn_start=0)
    resumed.received(envstep=230, learn_start=0)
    again = resumed.state_dict()
    assert again["stale_dropped"] == 2 and again["train_calls"] == 4 and again["batches"] == 4
    totals = resumed.summary(resumed.replay_last)
    assert totals["batches_stored"] == 4 and totals["gaps"] == 0 and totals["duplicates"] == 0
    overlap = resumed.overlap(230, {})
    assert overlap["train_calls"] == 4 and overlap["after_warmup_env_steps"] == 60 + 30
    assert overlap["learner_busy_seconds"] == 1.5


def test_an_off_policy_resume_takes_the_ledger_from_the_restored_replay_as_it_is():
    """The replay's ledger comes back from its snapshot with the saved run's counts: nothing is added twice."""
    counts = Counters(logging.getLogger("test_counters"), None)
    counts.load_state_dict({**Counters(logging.getLogger("test_counters"), None).state_dict(), "batches": 7})
    assert counts.summary({"stored": 7, "duplicates": 0, "gaps": 0})["batches_stored"] == 7


def test_a_checkpoint_from_before_the_new_counts_resumes_them_from_zero():
    old = {"batches": 4, "staleness_sum": 3, "staleness_max": 1, "lost_batches": 0, "collector_restarts": [],
           "replay_restarts": 0}
    counts = Counters(logging.getLogger("test_counters"), None, fresh=True)
    counts.load_state_dict(old)
    assert counts.stale_dropped == 0 and counts.state_dict()["batches"] == 4 and counts.overlap(0, {})["train_calls"] == 0
