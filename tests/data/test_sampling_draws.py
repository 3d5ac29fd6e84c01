"""Replay sampling draws are pinned: the same seed gives the same slots, ids, items and IS weights.

Recorded learning results (the DQN-PER learning test, the benchmarks' runs) depend on the exact
sequence of sampled indices, so a speed-up of a buffer's sampling must not change a single draw.
The digests below were taken with the code before the list-of-dicts / prioritized sampling
speed-ups; they cover uniform sampling (naive; advanced with and without holes), prioritized
sampling with learner updates (rejection rounds, extra rounds and the two-level search of very
skewed priorities), ``max_use`` eviction, and the benchmark's shape (100k slots, 40k items).
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


def naive_digest(seed: int) -> str:
    h = hashlib.sha256()
    b = NaiveReplayBuffer({"replay_buffer_size": 500}, seed=seed)
    for i in range(300):
        b.push(item(i))
    b.push([item(i) for i in range(300, 700)])
    for k in range(30):
        s = b.sample(17 + k) if k % 2 else b.sample_batch(33)
        _feed(h, s, False)
        h.update(np.stack([d["obs"] for d in s]).tobytes() if isinstance(s, list) else s["obs"].tobytes())
    return h.hexdigest()[:16]


def advanced_digest(seed: int, prio: bool, variant: str) -> str:
    """Pushes of 1-11 items between samples (both forms), learner updates; ``use``: max_use 3;
    ``skew``: priorities spread over 7 decades (the two-level search answers most calls)."""
    h = hashlib.sha256()
    cfg = {"replay_buffer_size": 1000, "priority": prio, "monitor": {"log_freq": 7}}
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


def bench_digest(seed: int) -> str:
    """The benchmark's per64: 100k slots, 40k items, sample_batch(64) + update(64), then the RNG state."""
    b = AdvancedReplayBuffer({"replay_buffer_size": 100_000, "priority": True}, seed=seed)
    for s0 in range(0, 40_000, 1000):
        b.push([item(i) for i in range(s0, s0 + 1000)])
    h = hashlib.sha256()
    rng = np.random.default_rng(1)
    for _ in range(300):
        s = b.sample_batch(64)
        _feed(h, s, True)
        b.update({"replay_unique_id": s["replay_unique_id"], "replay_buffer_idx": s["replay_buffer_idx"],
                  "priority": rng.random(64) + 0.01})
    h.update(repr(b._rng.bit_generator.state).encode())
    return h.hexdigest()[:16]


RECORDED: Dict[int, Dict[str, str]] = {
    0: {
        "naive": "566324f2524aa33b",
        "advanced_prio0_plain": "84b2f9f52730b21a",
        "advanced_prio0_use": "c0199a6d34f17aa0",
        "advanced_prio1_plain": "2187e29f19d23325",
        "advanced_prio1_use": "9c8ab8e0f59359bb",
        "advanced_prio1_skew": "c69be3cd93477ae5",
        "bench_per64": "469157ca496ab0bc",
    },
    1: {
        "naive": "03e2194f0a5170bd",
        "advanced_prio0_plain": "4a192d9103acdd8a",
        "advanced_prio0_use": "0aa4e9941735c9ae",
        "advanced_prio1_plain": "26aca5df15d1665b",
        "advanced_prio1_use": "1d6ac8d0502dd57f",
        "advanced_prio1_skew": "80bc8f109ad91a69",
    },
    2: {
        "naive": "5cffec339898f9f3",
        "advanced_prio0_plain": "ccbfba4c6d01391d",
        "advanced_prio0_use": "6ae595a328d34159",
        "advanced_prio1_plain": "073abb6714c3efb2",
        "advanced_prio1_use": "5c13c0d4dcbee9c5",
        "advanced_prio1_skew": "413defaaf17e896e",
    },
    3: {
        "naive": "51b76d5520346381",
        "advanced_prio0_plain": "2613b10f6e3ebf1c",
        "advanced_prio0_use": "c6683cfbeaef2f97",
        "advanced_prio1_plain": "f38c1cb1657b3dd6",
        "advanced_prio1_use": "67ede8c35a1e6b7e",
        "advanced_prio1_skew": "123551bed6e6b915",
        "bench_per64": "5f62b8086485f198",
    },
}


@pytest.mark.parametrize("seed", sorted(RECORDED))
def test_sampling_draws_unchanged(seed):
    rec = RECORDED[seed]
    got = {"naive": naive_digest(seed)}
    for prio, variant in ((False, "plain"), (False, "use"), (True, "plain"), (True, "use"), (True, "skew")):
        got[f"advanced_prio{int(prio)}_{variant}"] = advanced_digest(seed, prio, variant)
    if "bench_per64" in rec:  # (seeds 0 and 3 only: the 40k pushes take a while)
        got["bench_per64"] = bench_digest(seed)
    assert got == rec
