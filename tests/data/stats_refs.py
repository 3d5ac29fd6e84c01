"""Slow references, chi-square bounds and the ids of a sampled batch, shared by the replay sampling tests (not a test module)."""

from __future__ import annotations

import itertools
from typing import Dict, Sequence, Tuple

import numpy as np


def bound(df: int) -> float:
    return df + 6.0 * np.sqrt(2.0 * df) + 10.0


def chi2(counts: np.ndarray, expected: np.ndarray) -> float:
    return float(((counts - expected) ** 2 / expected).sum())


# ---- slow references ----------------------------------------------------------------------------
def ref_inclusion(w: Sequence[float], n: int) -> np.ndarray:
    """pi-ps inclusion probabilities: certainty items by fixed-point iteration, n' w / W' for the rest."""
    w = np.asarray(w, dtype=np.float64)
    cert = np.zeros(w.size, dtype=bool)
    while True:
        rest = ~cert & (w > 0)
        k = n - cert.sum()
        new = rest & (k * w >= w[rest].sum())
        if not new.any() or k == 0:
            break
        cert |= new
    k = n - cert.sum()
    rest = ~cert & (w > 0)
    pi = np.zeros(w.size)
    pi[rest] = k * w[rest] / w[rest].sum() if k else 0.0
    pi[cert] = 1.0
    return pi


def successive_inclusion(p: Sequence[float], n: int) -> np.ndarray:
    """Inclusion probabilities of successive sampling (draw proportionally, drop repeats), by enumeration."""
    p = np.asarray(p, dtype=np.float64) / np.sum(p)
    pi = np.zeros(p.size)
    for seq in itertools.permutations(range(p.size), n):
        prob, used = 1.0, 0.0
        for i in seq:
            prob *= p[i] / (1.0 - used)
            used += p[i]
        pi[list(seq)] += prob
    return pi


def capped_stream_law(p: Sequence[float], caps: Sequence[int], n: int) -> Dict[Tuple[int, ...], float]:
    """Law of the multiset (counts per item) of the first n accepted i.i.d. draws from ``p`` when a
    draw of an item holding ``caps[i]`` copies is rejected (dynamic programming over count vectors)."""
    p = np.asarray(p, dtype=np.float64)
    law = {tuple([0] * p.size): 1.0}
    for _ in range(n):
        nxt: Dict[Tuple[int, ...], float] = {}
        for counts, prob in law.items():
            open_ = [i for i in range(p.size) if counts[i] < caps[i]]
            z = p[open_].sum()
            for i in open_:
                c = list(counts)
                c[i] += 1
                nxt[tuple(c)] = nxt.get(tuple(c), 0.0) + prob * p[i] / z
        law = nxt
    return law


def check_inclusion(counts: np.ndarray, pi: np.ndarray, reps: int) -> None:
    """Inclusion counts over ``reps`` batches against the design's probabilities ``pi`` (a chi-square
    over the uncertain items; items with ``pi >= 1`` in every batch)."""
    certain = pi >= 1.0
    assert (counts[certain] == reps).all(), "an item that must be in every batch was left out"
    m = ~certain & (pi > 0)
    expected = reps * pi[m]
    stat = float(((counts[m] - expected) ** 2 / (expected * (1.0 - pi[m]))).sum())
    assert stat < bound(int(m.sum())), f"chi2 {stat:.1f} over {int(m.sum())} items"


def with_ids(sampled):
    """A ``sample_batch`` result as one batch with its ticket's ids and slots as the columns
    ``replay_unique_id`` / ``replay_buffer_idx`` (the form ``sample`` gives), for the tests that
    compare draws; None stays None."""
    if sampled is None:
        return None
    batch, ticket = sampled
    assert not {"replay_unique_id", "replay_buffer_idx"} & set(batch if isinstance(batch, dict) else batch[0])
    if isinstance(batch, list):
        return [dict(ep, replay_unique_id=int(i), replay_buffer_idx=int(s)) for ep, i, s in zip(batch, *ticket)]
    return {**batch, "replay_unique_id": ticket.ids, "replay_buffer_idx": ticket.slots}
