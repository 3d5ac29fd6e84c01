"""Replay sampling draws are pinned: the same seed gives the same slots, ids, items and IS weights.

Recorded learning results (the DQN-PER learning test, the benchmarks' runs) depend on the exact
sequence of sampled indices, so a speed-up of a buffer's sampling must not change a single draw.
Two records:

* ``RECORDED_IID`` -- ``replace=True`` (i.i.d. draws, what every buffer did before issue 13). The
  digests were taken with the code before the list-of-dicts / prioritized sampling speed-ups and
  still hold, except the ``*_use`` ones (``max_use=3``): those batches used to return an item more
  often than its remaining uses (3 uses left, 4 copies in a batch of 32); since issue 13 the copies
  past the cap are drawn again from the others (the draws up to the first excess copy are the old
  ones), so they were re-recorded (issue 13).
* ``RECORDED_DISTINCT`` -- the default ``replace=False`` (distinct items per batch; recorded when it
  was introduced, issue 13).

They cover uniform sampling (naive; advanced with and without holes), prioritized sampling with
learner updates (rejection rounds, extra rounds and the two-level search of very skewed
priorities), ``max_use`` eviction, and the benchmark's shape (100k slots, 40k items).
"""

from __future__ import annotations

import hashlib
from typing import Dict

import numpy as np
import pytest

from stride.data import AdvancedReplayBuffer, NaiveReplayBuffer


def item(i: int) -> dict:
    return {"obs": np.full(4, i, np.float32), "action": i % 3, "reward": float(i) * 0.5, "done": i % 7 == 0}


def _feed(h: "hashlib._Hash", s, with_is: bool) -> None:
    """Hash a sample: slots, ids, IS (and the naive buffer's obs) in either form."""
    if isinstance(s, list):
        h.update(np.array([d["replay_buffer_idx"] for d in s], np.int64).tobytes())
        h.update(np.array([d["replay_unique_id"] for d in s], np.int64).tobytes())
        if with_is:
            h.update(np.array([d["IS"] for d in s], np.float32).tobytes())
    else:
        h.update(s["replay_buffer_idx"].astype(np.int64).tobytes())
        h.update(s["replay_unique_id"].astype(np.int64).tobytes())
        if with_is:
            h.update(s["IS"].tobytes())


def naive_digest(seed: int, replace: bool) -> str:
    h = hashlib.sha256()
    b = NaiveReplayBuffer({"replay_buffer_size": 500, "replace": replace}, seed=seed)
    for i in range(300):
        b.push(item(i))
    b.push([item(i) for i in range(300, 700)])
    for k in range(30):
        s = b.sample(17 + k) if k % 2 else b.sample_batch(33)
        _feed(h, s, False)
        h.update(np.stack([d["obs"] for d in s]).tobytes() if isinstance(s, list) else s["obs"].tobytes())
    return h.hexdigest()[:16]


def advanced_digest(seed: int, prio: bool, variant: str, replace: bool) -> str:
    """Pushes of 1-11 items between samples (both forms), learner updates; ``use``: max_use 3;
    ``skew``: priorities spread over 7 decades (the two-level search answers most calls)."""
    h = hashlib.sha256()
    cfg = {"replay_buffer_size": 1000, "priority": prio, "monitor": {"log_freq": 7}, "replace": replace}
    if variant == "use":
        cfg["max_use"] = 3
    b = AdvancedReplayBuffer(cfg, seed=seed)
    rng = np.random.default_rng(seed + 100)
    nxt = 0
    for it in range(400):
        if it % 3 == 0:
            n = int(rng.integers(1, 12))
            b.push([item(nxt + j) for j in range(n)] if n > 1 else item(nxt))
            nxt += n
        if b.count() < 40:
            continue
        s = b.sample_batch(32, cur_learner_iter=it) if it % 2 else b.sample(32, cur_learner_iter=it)
        if s is None:
            h.update(b"none")
            continue
        _feed(h, s, prio)
        if prio:
            if isinstance(s, list):
                idx = [d["replay_buffer_idx"] for d in s]
                uid = [d["replay_unique_id"] for d in s]
            else:
                idx, uid = s["replay_buffer_idx"], s["replay_unique_id"]
            p = rng.random(32) + 0.01
            if variant == "skew":
                p = np.where(rng.random(32) < 0.1, p * 1e4, p * 1e-3)
            h.update(np.int64(b.update({"replay_unique_id": uid, "replay_buffer_idx": idx, "priority": p})).tobytes())
    return h.hexdigest()[:16]


def bench_digest(seed: int, replace: bool) -> str:
    """The benchmark's per64: 100k slots, 40k items, sample_batch(64) + update(64), then the RNG state."""
    b = AdvancedReplayBuffer({"replay_buffer_size": 100_000, "priority": True, "replace": replace}, seed=seed)
    for s0 in range(0, 40_000, 1000):
        b.push([item(i) for i in range(s0, s0 + 1000)])
    h = hashlib.sha256()
    rng = np.random.default_rng(1)
    for _ in range(300):
        s = b.sample_batch(64)
        _feed(h, s, True)
        b.update({"replay_unique_id": s["replay_unique_id"], "replay_buffer_idx": s["replay_buffer_idx"],
                  "priority": rng.random(64) + 0.01})
    h.update(repr(b.state_dict()["rng"]).encode())
    return h.hexdigest()[:16]


RECORDED_IID: Dict[int, Dict[str, str]] = {
    0: {
        "naive": "566324f2524aa33b",
        "advanced_prio0_plain": "84b2f9f52730b21a",
        "advanced_prio0_use": "d21fa5a172f75b4e",  # re-recorded (issue 13: max_use caps the batch)
        "advanced_prio1_plain": "2187e29f19d23325",
        "advanced_prio1_use": "b689ba2a5e3c733e",  # re-recorded (issue 13: max_use caps the batch)
        "advanced_prio1_skew": "c69be3cd93477ae5",
        "bench_per64": "469157ca496ab0bc",
    },
    1: {
        "naive": "03e2194f0a5170bd",
        "advanced_prio0_plain": "4a192d9103acdd8a",
        "advanced_prio0_use": "ad287577a65d0b18",  # re-recorded (issue 13: max_use caps the batch)
        "advanced_prio1_plain": "26aca5df15d1665b",
        "advanced_prio1_use": "a6ae5ac483c12422",  # re-recorded (issue 13: max_use caps the batch)
        "advanced_prio1_skew": "80bc8f109ad91a69",
    },
    2: {
        "naive": "5cffec339898f9f3",
        "advanced_prio0_plain": "ccbfba4c6d01391d",
        "advanced_prio0_use": "239da6038a87e2db",  # re-recorded (issue 13: max_use caps the batch)
        "advanced_prio1_plain": "073abb6714c3efb2",
        "advanced_prio1_use": "ec68e50de971134c",  # re-recorded (issue 13: max_use caps the batch)
        "advanced_prio1_skew": "413defaaf17e896e",
    },
    3: {
        "naive": "51b76d5520346381",
        "advanced_prio0_plain": "2613b10f6e3ebf1c",
        "advanced_prio0_use": "93ad551f8496e2a2",  # re-recorded (issue 13: max_use caps the batch)
        "advanced_prio1_plain": "f38c1cb1657b3dd6",
        "advanced_prio1_use": "e525a5d8fe74dbd7",  # re-recorded (issue 13: max_use caps the batch)
        "advanced_prio1_skew": "123551bed6e6b915",
        "bench_per64": "5f62b8086485f198",
    },
}

RECORDED_DISTINCT: Dict[int, Dict[str, str]] = {
    0: {
        "naive": "bc559dabade19ec4",
        "advanced_prio0_plain": "6b4cfe0354c0088d",
        "advanced_prio0_use": "3b9fad16c392c5a9",
        "advanced_prio1_plain": "6104ac07a6aa78de",
        "advanced_prio1_use": "828cdbd5cceb6851",
        "advanced_prio1_skew": "561faff285204363",
        "bench_per64": "a05eb47e0269d96f",
    },
    1: {
        "naive": "dbd9a05b3b11a836",
        "advanced_prio0_plain": "c8496cdcbd0db791",
        "advanced_prio0_use": "8fe5023e8f3e149e",
        "advanced_prio1_plain": "1235a2e6cba6ed74",
        "advanced_prio1_use": "bd38807dfc7a2047",
        "advanced_prio1_skew": "b5c7f1342be53ad5",
    },
    2: {
        "naive": "8697beb0ba566b81",
        "advanced_prio0_plain": "e268a03cc265e8d9",
        "advanced_prio0_use": "4e1ffa73ae97754e",
        "advanced_prio1_plain": "203f11d82c3a8995",
        "advanced_prio1_use": "a753d338384afdac",
        "advanced_prio1_skew": "18d38472a8065a29",
    },
    3: {
        "naive": "b8df390728706776",
        "advanced_prio0_plain": "51872a572dfdd19c",
        "advanced_prio0_use": "2ca1158dae8907fa",
        "advanced_prio1_plain": "c0590c2d4bd2e1ea",
        "advanced_prio1_use": "f06a51dd0bc98c82",
        "advanced_prio1_skew": "0bf65c8d1c0ddafe",
        "bench_per64": "559240c1d01830b6",
    },
}


def _digests(seed: int, replace: bool, bench: bool) -> Dict[str, str]:
    got = {"naive": naive_digest(seed, replace)}
    for prio, variant in ((False, "plain"), (False, "use"), (True, "plain"), (True, "use"), (True, "skew")):
        got[f"advanced_prio{int(prio)}_{variant}"] = advanced_digest(seed, prio, variant, replace)
    if bench:  # (seeds 0 and 3 only: the 40k pushes take a while)
        got["bench_per64"] = bench_digest(seed, replace)
    return got


@pytest.mark.parametrize("seed", sorted(RECORDED_IID))
def test_sampling_draws_unchanged_iid(seed):
    rec = RECORDED_IID[seed]
    assert _digests(seed, True, "bench_per64" in rec) == rec


@pytest.mark.parametrize("seed", sorted(RECORDED_DISTINCT))
def test_sampling_draws_unchanged_distinct(seed):
    rec = RECORDED_DISTINCT[seed]
    assert _digests(seed, False, "bench_per64" in rec) == rec
