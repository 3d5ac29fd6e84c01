"""Envs in worker processes run the episodes the base manager gives: every reset in a worker gets
its seed from the parent's stream, in-place auto-resets included."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pytest

from stride.envs import AsyncSubprocessEnvManager, BaseEnvManager, GymnasiumEnv, SyncSubprocessEnvManager
from stride.envs.env_manager.protocol import Call


class CountingCartPole(GymnasiumEnv):
    """CartPole that counts its resets and those that were given a seed."""

    def __init__(self) -> None:
        super().__init__("CartPole-v1")
        self.seeded_resets = 0
        self.resets = 0

    def reset(self, seed: Optional[int] = None, **kwargs: Any) -> Any:
        self.resets += 1
        self.seeded_resets += seed is not None
        return super().reset(seed=seed, **kwargs)

    def counts(self) -> tuple:
        return self.resets, self.seeded_resets


def _episodes(m, rounds: int) -> list:
    out = []
    for t in range(rounds):
        for i, ts in sorted(m.step({i: int(t % 7 < 5) for i in m.ready_obs}).items()):
            out.append((i, np.asarray(ts.obs).tobytes(), ts.reward, ts.done))
    return out


@pytest.mark.parametrize("cls", [SyncSubprocessEnvManager, AsyncSubprocessEnvManager])
def test_workers_reset_with_the_parents_seeds_and_run_the_same_episodes(cls):
    fns = [CountingCartPole for _ in range(4)]
    base = BaseEnvManager(fns, {})
    base.seed(7)
    base.launch()
    try:
        reference = _episodes(base, 150)
    finally:
        base.close()
    cfg = {"envs_per_worker": 2}
    if cls is AsyncSubprocessEnvManager:
        cfg["wait_num"] = 4  # every env each call: the same calls as the base manager
    m = cls(fns, cfg)
    m.seed(7)
    m.launch()
    try:
        assert _episodes(m, 150) == reference
        m._calls.clear()
        for w in m._workers:
            m._send(w, list(w.env_ids), Call(list(range(len(w.env_ids))), "counts", ()))
        m._pump(lambda: len(m._calls) == 4)
        counts = [m._calls[i][0] for i in range(4)]
    finally:
        m.close()
    assert all(resets >= 5 for resets, _ in counts), counts  # mostly one action: short episodes
    assert all(seeded == resets for resets, seeded in counts), counts
