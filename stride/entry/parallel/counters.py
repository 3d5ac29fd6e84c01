"""What the parallel coordinator counts and reports: batches, losses, restarts, where the time went.

:class:`Counters` is the bookkeeping half of :class:`~.coordinator.Coordinator`, kept apart from
its loop: each batch's staleness and the replay's verdict on it, the batches lost (in a dead
collector, or as gaps in the replay's ledger), the collector and replay restarts, the on-policy
unrolls dropped as stale, and the overlap clocks (the learner's busy and idle seconds, the
collectors' held ones, after the warm-up). It logs what goes wrong as it is counted, gives
``progress.csv`` its parallel columns and ``result.json`` its counters, and its state goes into
the run's checkpoints (through the coordinator's ``state_dict``), so a resumed run's counts go on.
The clocks are reported, never used to decide anything: the loop's decisions are counts only.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Dict, List, Mapping, Optional

from ...utils.narrow import as_int, as_list, as_mapping, as_number
from ...worker.protocols import ScalarWriter
from .tags import BatchTag

#: the counters a resumed run adds its new batches to (the saved run's totals)
RESUMED_KEYS = ("batches", "staleness_sum", "staleness_max", "replay_restarts", "stale_dropped", "train_calls",
                "replay_lost_batches", "replay_lost_items")

#: an on-policy run's ledger counts (its learner's ledger starts anew in a resumed run: these add to it)
LEDGER_KEYS = ("stored", "duplicates", "gaps")

#: the overlap clocks, and the env steps they timed, a resumed run adds to (each process times its own)
CLOCK_KEYS = ("after_warmup_wall_seconds", "learner_busy_seconds", "learner_idle_seconds", "collector_wait_seconds")


class Counters:
    """A parallel run's counts (see the module docstring); ``log`` and ``tb``: where they are reported;
    ``fresh``: an on-policy run's (its ledger is the learner's, which a resumed run starts anew)."""

    def __init__(self, log: logging.Logger, tb: Optional[ScalarWriter], fresh: bool = False) -> None:
        self._log, self._tb, self._fresh = log, tb, fresh
        self.restarts: List[Dict[str, object]] = []
        self.lost_batches = 0
        self.staleness: List[int] = []  # this process's batches; the resumed ones' are in self._before
        self.by_collector: Dict[str, int] = {}  # batches of each collector name (every incarnation; resumed ones too)
        self.replay_pids: List[int] = []
        self.replay_last: Dict[str, object] = {}
        # what the replay's restarts lost (stored after its last snapshot): this process's
        self.replay_lost = {"batches": 0, "items": 0}
        self.stale_dropped = 0  # on-policy: unrolls older than system_config.max_staleness, not trained on (all runs')
        self.train_calls = 0  # this process's; the resumed ones' are in self._before
        self._before = {key: 0 for key in RESUMED_KEYS}
        self._before_ledger = {key: 0 for key in LEDGER_KEYS}  # on-policy: the saved run's ledger counts
        self._before_clocks = {key: 0.0 for key in (*CLOCK_KEYS, "after_warmup_env_steps")}
        # where the time goes after the warm-up (wall seconds; reported, never used to decide anything)
        self._warm_t0: Optional[float] = None  # when the env steps passed learn_start
        self._warm_env0 = 0
        self._envstep = 0  # the run's env steps at the last batch
        self._idle_since: Optional[float] = None
        self.clocks = {"after_warmup_wall_seconds": 0.0, "learner_busy_seconds": 0.0, "learner_idle_seconds": 0.0,
                       "collector_wait_seconds": 0.0}

    def received(self, envstep: int, learn_start: int) -> None:
        """A batch arrived, the run at ``envstep``: the first one past ``learn_start`` starts the clocks."""
        self._envstep = envstep
        if self._warm_t0 is None and envstep >= learn_start:
            self._warm_t0 = self._idle_since = time.perf_counter()
            self._warm_env0 = envstep

    def train_sent(self) -> None:
        """A train call went to the learner: its idle time (since the last call returned) ends."""
        self.train_calls += 1
        if self._idle_since is not None:
            self.clocks["learner_idle_seconds"] += time.perf_counter() - self._idle_since
        self._idle_since = None

    def train_returned(self) -> None:
        """The train call in flight returned: the learner is idle until the next one."""
        self._idle_since = time.perf_counter()

    def settle(self) -> None:
        """The run's end: the wall clock after the warm-up, and the learner's last idle time, closed."""
        if self._warm_t0 is not None:
            now = time.perf_counter()
            self.clocks["after_warmup_wall_seconds"] = now - self._warm_t0
            if self._idle_since is not None:
                self.clocks["learner_idle_seconds"] += now - self._idle_since
                self._idle_since = now

    def overlap(self, envstep: int, ratio: Dict[str, object]) -> Dict[str, object]:
        """The replay ratio (target, achieved: ``ratio``, empty for an on-policy run, which has
        none) and where the time went after the warm-up (from the batch that passed
        ``learn_start``): env steps and wall seconds, the learner's busy seconds (in its train
        calls) and idle ones (no call in flight), the collectors' held seconds; the rest of the
        learner's time is its calls' round trips (sampling, transfer, the driver)."""
        clocks = self._clocks(envstep)
        return {**ratio, "after_warmup_env_steps": int(clocks.pop("after_warmup_env_steps")),
                **{k: round(v, 3) for k, v in clocks.items()}, "train_calls": self._before["train_calls"] + self.train_calls}

    def _clocks(self, envstep: int) -> Dict[str, float]:
        """The clocks and the env steps they timed, a resumed run's included (``envstep``: the run's now)."""
        mine = {**self.clocks, "after_warmup_env_steps": float(envstep - self._warm_env0 if self._warm_t0 else 0)}
        return {key: before + mine[key] for key, before in self._before_clocks.items()}

    def record(self, tag: BatchTag, push: Mapping[str, object], train_iter: int, envstep: int) -> None:
        """A batch's staleness and the replay's verdict on it (``push``: stored or not, gaps, the
        replay's process: a new one is a restart), logged as they come and every 100 batches."""
        stale = tag.staleness(train_iter)
        self.staleness.append(stale)
        self.by_collector[tag.collector] = self.by_collector.get(tag.collector, 0) + 1
        if self._tb is not None:
            self._tb.add_scalar("parallel/staleness", stale, train_iter)
            self._tb.add_scalar("parallel/batch_gaps", as_int(push["gaps"], "the replay's gaps"), train_iter)
        if not push["admitted"]:
            self._log.warning(f"[coordinator] batch {tuple(tag)[:3]} not stored (duplicate or stale incarnation)")
        if as_int(push["gap"], "a batch's gap") > 0:
            self._log.warning(f"[coordinator] {push['gap']} batch(es) of {tag.collector} incarnation "
                              f"{tag.incarnation} missing before seq {tag.seq}")
        pid = as_int(push["pid"], "the replay's pid")
        if not self.replay_pids or self.replay_pids[-1] != pid:
            if self.replay_pids:
                self._replay_restarted(push)
            self.replay_pids.append(pid)
        if len(self.staleness) % 100 == 0:
            recent = self.staleness[-100:]
            self._log.info(f"[coordinator] train_iter={train_iter} envstep={envstep} batches="
                           f"{len(self.staleness)} staleness_mean={sum(recent) / len(recent):.2f} "
                           f"staleness_max={max(recent)} stored={push['stored']} duplicates={push['duplicates']} "
                           f"gaps={push['gaps']} lost_in_collectors={self.lost_batches}")
        self.replay_last = dict(push)

    def _replay_restarted(self, push: Mapping[str, object]) -> None:
        """The replay's first verdict from a new process (``push``): what the dead one had stored
        since the snapshot the new one started from is lost (its batches become the ledger's gaps
        as their collectors' next batches arrive), counted and said in one stderr line."""
        def count(verdict: Mapping[str, object], key: str) -> int:
            return as_int(verdict.get(key, 0), f"the replay's {key}")

        batches = max(0, count(self.replay_last, "stored") - count(push, "restored_stored"))
        items = max(0, count(self.replay_last, "pushed_items") - count(push, "restored_items"))
        self.replay_lost["batches"] += batches
        self.replay_lost["items"] += items
        msg = (f"[coordinator] the replay actor was restarted "
               f"({'from its last snapshot' if push['restored'] else 'empty: no snapshot yet'}); it lost the "
               f"{batches} batch(es) ({items} items) stored since, counted as gaps")
        self._log.warning(msg)
        print(f"stride: {msg}", file=sys.stderr, flush=True)

    def dropped(self, tag: BatchTag, out: Mapping[str, object], train_iter: int, max_staleness: int) -> None:
        """On-policy: the learner's count of stale unrolls dropped (``out``: its ``train_fresh``), a
        new drop logged."""
        total = self._before["stale_dropped"] + as_int(out["stale_dropped"], "stale_dropped")  # the learner's: this process's
        if total > self.stale_dropped:
            self._log.warning(f"[coordinator] unroll {tuple(tag)[:3]} dropped: {out['staleness']} versions old "
                              f"(system_config.max_staleness={max_staleness}); {total} so far")
        self.stale_dropped = total
        if self._tb is not None:
            self._tb.add_scalar("parallel/stale_dropped", self.stale_dropped, train_iter)

    def deaths(self, name: str) -> int:
        """How many times collector ``name`` died before (each a restart)."""
        return sum(1 for r in self.restarts if r["collector"] == name)

    def restarted(self, name: str, incarnation: int, envstep: int, train_iter: int) -> None:
        """Collector ``name``'s ``incarnation`` died with one batch in flight and was replaced."""
        self.restarts.append({"collector": name, "incarnation": incarnation, "lost_batches": 1, "envstep": envstep,
                              "train_iter": train_iter})

    def columns(self, fresh: bool) -> Dict[str, object]:
        """A parallel run's columns of ``progress.csv``, after the serial ones: the last 100 batches'
        staleness and the batches lost so far (``fresh``: an on-policy run's stale unrolls too)."""
        recent = self.staleness[-100:] or [0]
        return {"staleness_mean": sum(recent) / len(recent), "staleness_max": max(recent),
                "lost_batches": self.lost_batches + self.ledger(self.replay_last)["gaps"],
                **({"stale_dropped": self.stale_dropped} if fresh else {})}

    def summary(self, replay: Mapping[str, object]) -> Dict[str, object]:
        """The run's totals for ``result.json`` (a resumed run's included); ``replay``: the ledger's
        summary (the replay's, or an on-policy run's learner's)."""
        counters, ledger = self.state_dict(), self.ledger(replay)
        batches = as_int(counters["batches"], "batches")
        return {"batches": batches, "batches_stored": ledger["stored"], "duplicates": ledger["duplicates"],
                "gaps": ledger["gaps"], "lost_batches": self.lost_batches + ledger["gaps"],
                "collector_restarts": counters["collector_restarts"], "replay_restarts": counters["replay_restarts"],
                "replay_lost_batches": counters["replay_lost_batches"], "replay_lost_items": counters["replay_lost_items"],
                "staleness_mean": as_int(counters["staleness_sum"], "staleness") / max(batches, 1),
                "staleness_max": counters["staleness_max"], "batches_by_collector": counters["batches_by_collector"]}

    def ledger(self, summary: Mapping[str, object]) -> Dict[str, int]:
        """The ledger's counts of the whole run from its holder's ``summary`` (the replay's, restored
        from its snapshot in a resumed run; or an on-policy run's learner's, which starts anew and
        adds to the saved run's counts)."""
        before = self._before_ledger if self._fresh else {key: 0 for key in LEDGER_KEYS}
        return {key: before[key] + as_int(summary.get(key, 0), f"the ledger's {key}") for key in LEDGER_KEYS}

    def state_dict(self) -> Dict[str, object]:
        """The counts (batches, staleness, losses, restarts, stale unrolls, train calls, clocks, an
        on-policy run's ledger counts): a resumed run goes on from them."""
        stale = self.staleness or [0]
        return {"batches": self._before["batches"] + len(self.staleness),
                "staleness_sum": self._before["staleness_sum"] + sum(self.staleness),
                "staleness_max": max(self._before["staleness_max"], max(stale)), "lost_batches": self.lost_batches,
                "collector_restarts": [dict(r) for r in self.restarts], "batches_by_collector": dict(self.by_collector),
                "replay_restarts": self._before["replay_restarts"] + max(0, len(self.replay_pids) - 1),
                "stale_dropped": self.stale_dropped, "train_calls": self._before["train_calls"] + self.train_calls,
                **{f"replay_lost_{k}": self._before[f"replay_lost_{k}"] + n for k, n in self.replay_lost.items()},
                "ledger": self.ledger(self.replay_last) if self._fresh else {},
                "clocks": self._clocks(self._envstep)}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        """Go on from saved counts (:meth:`state_dict`; one saved before a count was kept: that count from 0)."""
        self._before = {key: as_int(state.get(key, 0), f"coordinator state '{key}'") for key in RESUMED_KEYS}
        self.stale_dropped = self._before["stale_dropped"]
        ledger = as_mapping(state.get("ledger", {}), "coordinator state 'ledger'")
        self._before_ledger = {key: as_int(ledger.get(key, 0), f"coordinator state 'ledger.{key}'") for key in LEDGER_KEYS}
        clocks = as_mapping(state.get("clocks", {}), "coordinator state 'clocks'")
        self._before_clocks = {key: as_number(clocks.get(key, 0.0), f"coordinator state 'clocks.{key}'") for key in self._before_clocks}
        self.lost_batches = as_int(state["lost_batches"], "coordinator state 'lost_batches'")
        by = as_mapping(state.get("batches_by_collector", {}), "coordinator state 'batches_by_collector'")
        self.by_collector = {str(k): as_int(v, "coordinator state 'batches_by_collector'") for k, v in by.items()}
        self.restarts = [dict(as_mapping(r, "coordinator state 'collector_restarts'"))
                         for r in as_list(state["collector_restarts"], "coordinator state 'collector_restarts'")]
