"""Replay sampling draws are pinned: the same seed gives the same slots and ids on every x86-64 CPU.

Recorded learning results (the DQN-PER learning test, the benchmarks' runs) depend on the exact
sequence of sampled indices, so a speed-up of a buffer's sampling must not change a single draw.

What is portable, and so what is pinned (issue 28): the *draws* -- slots and ids -- come from
NumPy's integer and uniform streams (the same on every CPU) and from comparisons against leaf
weights; they are recorded as digests, and :func:`test_draws_same_at_every_simd_level` checks that
NumPy's SIMD dispatch (AVX-512, AVX2, SSE baseline: ``NPY_DISABLE_CPU_FEATURES``) does not move
them. The *IS weights* are not portable bit for bit: NumPy's ``power`` is CPU-specific (on AVX-512
it runs Intel's SVML kernels, elsewhere other loops; they differ in the last bits), so the
recorded digests once held IS bytes and failed on an AMD EPYC without AVX-512. They are checked
instead against the PER formula computed here in float64 from the buffer's priorities (relative
1e-5). Making them bit-portable would need a hand-written ``pow`` of basic IEEE operations (~15
NumPy calls on the 64-row hot path, several times the cost of one ``power``) and would still buy
no portable training run: the loss they weight is computed by torch kernels that are CPU-specific
too. On one machine everything, IS weights included, stays bit-exact (the resume tests).

Two records:

* ``RECORDED_IID`` -- ``replace=True`` (i.i.d. draws). The ``*_use`` ones (``max_use=3``): copies
  past the cap are drawn again from the others (issue 13).
* ``RECORDED_DISTINCT`` -- the default ``replace=False`` (distinct items per batch, issue 13).

They cover uniform sampling (naive; advanced with and without holes), prioritized sampling with
learner updates (rejection rounds, extra rounds and the two-level search of very skewed
priorities), ``max_use`` eviction, and the benchmark's shape (100k slots, 40k items). The digests
were re-recorded without the IS bytes (issue 28) from the code whose IS-including digests held on
this project's machines, so the draws are the ones of every earlier run.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from typing import Dict

import numpy as np
import pytest

from stride.data import AdvancedReplayBuffer, NaiveReplayBuffer
from .stats_refs import with_ids

def item(i: int) -> dict:
    return {"obs": np.full(4, i, np.float32), "action": i % 3, "reward": float(i) * 0.5, "done": i % 7 == 0}


def _feed(h: "hashlib._Hash", s) -> None:
    """Hash a sample's draws: slots and ids, in either form."""
    if isinstance(s, list):
        h.update(np.array([d["replay_buffer_idx"] for d in s], np.int64).tobytes())
        h.update(np.array([d["replay_unique_id"] for d in s], np.int64).tobytes())
    else:
        h.update(s["replay_buffer_idx"].astype(np.int64).tobytes())
        h.update(s["replay_unique_id"].astype(np.int64).tobytes())


def reference_is(prio: np.ndarray, slots: np.ndarray, n: int, alpha: float, beta: float, replace: bool) -> np.ndarray:
    """PER's IS weights of the drawn ``slots``, from the priorities before the draw (float64).

    ``w = p^alpha`` over the stored items; with replacement ``IS_i = (w_i / w_min)^-beta``; a
    distinct batch caps the weights at ``tau`` when some items are certain (``n w_i`` above the rest's
    total): the largest ``c`` items are certain for the least ``c`` with ``(n - c) w_(c) < W - top_c``,
    ``tau = (W - top_c) / (n - c)``, and ``IS_i = (min(w_i, tau) / min(w_min, tau))^-beta``."""
    w_all = prio[prio > 0] ** alpha
    tau = np.inf
    if not replace:
        top = np.sort(w_all)[::-1]
        total = float(w_all.sum())
        for c in range(n):
            rest = total - float(top[:c].sum())
            if (n - c) * top[c] < rest * (1.0 - 1e-9):
                tau = np.inf if c == 0 else rest / (n - c)
                break
        else:
            tau = float(top[n - 1])
    w = np.minimum(prio[slots] ** alpha, tau)
    return (w / min(float(w_all.min()), tau)) ** -beta


def _check_is(b: AdvancedReplayBuffer, s, prio_before: np.ndarray, beta: float, replace: bool) -> None:
    slots = np.array([d["replay_buffer_idx"] for d in s] if isinstance(s, list) else s["replay_buffer_idx"])
    got = np.array([d["IS"] for d in s], np.float64) if isinstance(s, list) else s["IS"].astype(np.float64)
    ref = reference_is(prio_before, slots, slots.size, b.priority_table.alpha, beta, replace)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=0)


def naive_digest(seed: int, replace: bool) -> str:
    h = hashlib.sha256()
    b = NaiveReplayBuffer({"replay_buffer_size": 500, "replace": replace}, seed=seed)
    for i in range(300):
        b.push(item(i))
    b.push([item(i) for i in range(300, 700)])
    for k in range(30):
        s = b.sample(17 + k) if k % 2 else with_ids(b.sample_batch(33))
        _feed(h, s)
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
        prio_before, beta = b.priorities.copy(), b.beta
        s = with_ids(b.sample_batch(32, cur_learner_iter=it)) if it % 2 else b.sample(32, cur_learner_iter=it)
        if s is None:
            h.update(b"none")
            continue
        _feed(h, s)
        if prio:
            _check_is(b, s, prio_before, beta, replace)
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
    for k in range(300):
        prio_before, beta = (b.priorities.copy(), b.beta) if k % 30 == 0 else (None, 0.0)
        s = with_ids(b.sample_batch(64))
        _feed(h, s)
        if prio_before is not None:  # (every 30th: the reference is O(N log N))
            _check_is(b, s, prio_before, beta, replace)
        b.update({"replay_unique_id": s["replay_unique_id"], "replay_buffer_idx": s["replay_buffer_idx"],
                  "priority": rng.random(64) + 0.01})
    h.update(repr(b.state_dict()["rng"]).encode())
    return h.hexdigest()[:16]


RECORDED_IID: Dict[int, Dict[str, str]] = {
    0: {
        "naive": "566324f2524aa33b",
        "advanced_prio0_plain": "84b2f9f52730b21a",
        "advanced_prio0_use": "d21fa5a172f75b4e",
        "advanced_prio1_plain": "5a1aed785f884a65",
        "advanced_prio1_use": "3d2495a9b9c1dd21",
        "advanced_prio1_skew": "f82c2ac92d1d6fc9",
        "bench_per64": "e62f57165743c578",
    },
    1: {
        "naive": "03e2194f0a5170bd",
        "advanced_prio0_plain": "4a192d9103acdd8a",
        "advanced_prio0_use": "ad287577a65d0b18",
        "advanced_prio1_plain": "a1cfb301b7b0af66",
        "advanced_prio1_use": "4592723e2aa2f0cd",
        "advanced_prio1_skew": "a4a4c883870d2cbd",
    },
    2: {
        "naive": "5cffec339898f9f3",
        "advanced_prio0_plain": "ccbfba4c6d01391d",
        "advanced_prio0_use": "239da6038a87e2db",
        "advanced_prio1_plain": "f7fadd814930fa10",
        "advanced_prio1_use": "0c96af51319b3bc4",
        "advanced_prio1_skew": "2ec0925f93ff837b",
    },
    3: {
        "naive": "51b76d5520346381",
        "advanced_prio0_plain": "2613b10f6e3ebf1c",
        "advanced_prio0_use": "93ad551f8496e2a2",
        "advanced_prio1_plain": "712dec4caaa5fc52",
        "advanced_prio1_use": "fdb6a6562eec356a",
        "advanced_prio1_skew": "2d8c294e523c18e9",
        "bench_per64": "cbb78679e29cc778",
    },
}

RECORDED_DISTINCT: Dict[int, Dict[str, str]] = {
    0: {
        "naive": "bc559dabade19ec4",
        "advanced_prio0_plain": "6b4cfe0354c0088d",
        "advanced_prio0_use": "3b9fad16c392c5a9",
        "advanced_prio1_plain": "6b9ced1b5b69b9ac",
        "advanced_prio1_use": "caab77c7c2b6a937",
        "advanced_prio1_skew": "a7e3aa05f98b7d80",
        "bench_per64": "56ab76bdab227ca9",
    },
    1: {
        "naive": "dbd9a05b3b11a836",
        "advanced_prio0_plain": "c8496cdcbd0db791",
        "advanced_prio0_use": "8fe5023e8f3e149e",
        "advanced_prio1_plain": "5a26f86d2a5637a2",
        "advanced_prio1_use": "38be155ea5c4f414",
        "advanced_prio1_skew": "19490504ca5ee482",
    },
    2: {
        "naive": "8697beb0ba566b81",
        "advanced_prio0_plain": "e268a03cc265e8d9",
        "advanced_prio0_use": "4e1ffa73ae97754e",
        "advanced_prio1_plain": "4c77ec431575a8c9",
        "advanced_prio1_use": "d3d5a4e25fa694ea",
        "advanced_prio1_skew": "aa15ca0d76a96266",
    },
    3: {
        "naive": "b8df390728706776",
        "advanced_prio0_plain": "51872a572dfdd19c",
        "advanced_prio0_use": "2ca1158dae8907fa",
        "advanced_prio1_plain": "fed87b0d1db9d0b8",
        "advanced_prio1_use": "58cacfafcaa78e37",
        "advanced_prio1_skew": "5c729cf72fa5f9da",
        "bench_per64": "b612c49af6afba94",
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


#: NumPy's x86-64 SIMD levels above the SSE baseline, disabled in turn (a level the CPU lacks is ignored)
SIMD_OFF = {"avx512": "X86_V4 AVX512_ICL AVX512_SPR", "avx2": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"}


@pytest.mark.parametrize("level", sorted(SIMD_OFF))
def test_draws_same_at_every_simd_level(level):
    """The draws (and the IS weights' agreement with the formula) do not depend on the SIMD code
    NumPy picks for this CPU: what another x86-64 CPU (e.g. without AVX-512) would run."""
    code = ("import json; from tests.data.test_sampling_draws import _digests; "
            "print(json.dumps({r: _digests(0, r == 'iid', False) for r in ('iid', 'distinct')}))")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=SIMD_OFF[level])
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    want = {r: {k: v for k, v in rec[0].items() if k != "bench_per64"}
            for r, rec in (("iid", RECORDED_IID), ("distinct", RECORDED_DISTINCT))}
    assert got == want


def test_episode_buffer_draws_pinned():
    """The episode buffer samples through a UniformSelector over its slots: the draws its own
    BatchLimit gave before (recorded from that code), distinct and i.i.d., across a ring that wraps
    and a state round trip."""
    from stride.data import EpisodeReplayBuffer

    h = hashlib.sha256()
    for replace in (False, True):
        for cap in (5, 50):
            b = EpisodeReplayBuffer({"replay_buffer_size": cap, "replace": replace}, seed=3)
            for k in range(40):
                b.push([[{"obs": np.array([k, t], np.float32), "reward": 1.0} for t in range(1 + k % 4)]
                        for _ in range(1 + k % 3)])
                for size in (1, 3, 4):
                    s = b.sample(size)
                    if s is not None:
                        h.update(np.array([ep[0]["replay_unique_id"] for ep in s]
                                          + [ep[0]["replay_buffer_idx"] for ep in s], np.int64).tobytes())
                if k == 20:
                    b.load_state_dict(b.state_dict())
    assert h.hexdigest() == "91683335933148afa00915b226bc352eadfb00492f81de1f337a7be2718aa69d"
