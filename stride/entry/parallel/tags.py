"""Batch tags and the replay's ledger of them: no batch stored twice, every lost batch counted.

Each batch a collector sends carries ``(collector, incarnation, seq)``: the collector's name, how
many times it has been restarted, and the batch's number within that incarnation (0, 1, 2, ...).
The replay asks :class:`TagLedger` before storing one. A tag seen before (a retried call after an
actor restart) is a duplicate and dropped; a jump in ``seq`` is a gap (batches lost between
collector and replay, e.g. those the replay took after its last snapshot before it died). Batches
a dead collector incarnation never sent are counted by the coordinator, which knows what it asked
for. DI-engine's parallel mode has no such tags (a restarted collector's data is neither
deduplicated nor counted lost); RLlib drops an env runner's in-flight samples silently.

Plain Python, no Ray: tested on its own and usable by any transport.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, NamedTuple

from ...utils.errors import StrideError
from ...utils.narrow import as_int, as_list, as_mapping


class BatchTag(NamedTuple):
    """Where a batch comes from: collector name, its incarnation (restarts) and the batch's number."""

    collector: str
    incarnation: int
    seq: int
    policy_iter: int  # the learner iteration of the weights the batch was collected with

    def staleness(self, learner_iter: int) -> int:
        """Learner iterations between the weights that collected the batch and ``learner_iter``."""
        return max(0, learner_iter - self.policy_iter)


class Verdict(NamedTuple):
    """What :meth:`TagLedger.admit` decided: store the batch or not, and how many batches before it went missing."""

    store: bool
    gap: int


class TagLedger:
    """Per collector: the newest incarnation seen and the batch numbers received in it.

    ``admit(tag)`` stores a batch whose tag is new. Within one incarnation batches may arrive out of
    order (a retried call): a batch below the highest number seen fills the gap it had opened, one
    at or below it that was already received is a duplicate. A batch of an older incarnation than
    the newest seen is refused (its collector was replaced; its data is stale), and the batches still
    missing from it stay counted (:attr:`gaps` never goes back)."""

    def __init__(self) -> None:
        self._incarnation: Dict[str, int] = {}
        self._next: Dict[str, int] = {}  # the number after the highest received, per collector
        self._missing: Dict[str, List[int]] = {}  # numbers skipped over and not (yet) received
        self._abandoned = 0  # numbers still missing from incarnations that were replaced (never coming)
        self.stored = 0
        self.duplicates = 0
        self.stale_incarnation = 0

    def admit(self, tag: BatchTag) -> Verdict:
        """Decide on one batch (and record it when it is stored)."""
        name, inc, seq = tag.collector, tag.incarnation, tag.seq
        if seq < 0 or inc < 0:
            raise StrideError(f"batch tag {tuple(tag)} has a negative incarnation or sequence number")
        known = self._incarnation.get(name)
        if known is not None and inc < known:
            self.stale_incarnation += 1
            return Verdict(False, 0)
        if known is None or inc > known:  # a new collector or a new incarnation: numbering restarts at 0
            self._abandoned += len(self._missing.get(name, ()))
            self._incarnation[name], self._next[name], self._missing[name] = inc, 0, []
        nxt, missing = self._next[name], self._missing[name]
        if seq >= nxt:
            gap = seq - nxt
            missing.extend(range(nxt, seq))
            self._next[name] = seq + 1
            self.stored += 1
            return Verdict(True, gap)
        if seq in missing:  # late arrival of a batch counted missing
            missing.remove(seq)
            self.stored += 1
            return Verdict(True, -1)
        self.duplicates += 1
        return Verdict(False, 0)

    @property
    def gaps(self) -> int:
        """Batches skipped over and still missing (those of replaced incarnations included)."""
        return self._abandoned + sum(len(m) for m in self._missing.values())

    def incarnations(self) -> Dict[str, int]:
        """The newest incarnation seen of each collector: a resumed run starts its collectors above
        them, so their numbering restarts without their batches being taken for duplicates."""
        return dict(self._incarnation)

    def summary(self) -> Dict[str, int]:
        """Counters for logs and the run's result."""
        return {"stored": self.stored, "duplicates": self.duplicates, "gaps": self.gaps,
                "stale_incarnation": self.stale_incarnation}

    def state_dict(self) -> Dict[str, object]:
        """Plain values (what a replay snapshot holds)."""
        return {"incarnation": dict(self._incarnation), "next": dict(self._next),
                "missing": {k: list(v) for k, v in self._missing.items()}, "abandoned": self._abandoned,
                "stored": self.stored,
                "duplicates": self.duplicates, "stale_incarnation": self.stale_incarnation}

    def load_state_dict(self, state: Mapping[str, object]) -> None:
        """Restore what :meth:`state_dict` gave."""
        def ints(key: str) -> Dict[str, int]:
            return {str(k): as_int(v, f"ledger '{key}'") for k, v in as_mapping(state[key], f"ledger '{key}'").items()}

        self._incarnation, self._next = ints("incarnation"), ints("next")
        missing = as_mapping(state["missing"], "ledger 'missing'")
        self._missing = {str(k): [as_int(s, "ledger 'missing'") for s in as_list(v, 'ledger missing')] for k, v in missing.items()}
        self._abandoned = as_int(state.get("abandoned", 0), "ledger 'abandoned'")  # 0: a snapshot from before it
        self.stored = as_int(state["stored"], "ledger 'stored'")
        self.duplicates = as_int(state["duplicates"], "ledger 'duplicates'")
        self.stale_incarnation = as_int(state["stale_incarnation"], "ledger 'stale_incarnation'")

