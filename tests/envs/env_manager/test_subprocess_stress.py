"""Randomized interleavings of every manager operation with SIGKILLs and crashing envs."""

from __future__ import annotations

import functools
import json
import os
import random
import signal

import pytest

from stride.envs import AsyncSubprocessEnvManager, SyncSubprocessEnvManager
from stride.testing import make_fake_env
from tests.envs.tests_envs_helpers import worker_children


@pytest.mark.slow
@pytest.mark.parametrize("cls", [SyncSubprocessEnvManager, AsyncSubprocessEnvManager])
@pytest.mark.parametrize("per,shm", [(1, True), (2, False)])
@pytest.mark.parametrize("seed,crashing", [(0, False), (1, True)])
def test_random_operations(cls, per, shm, seed, crashing):
    rng = random.Random(seed)
    fns = [functools.partial(make_fake_env, min_len=3, max_len=12, step_error_every=13 if crashing else 0) for _ in range(5)]
    m = cls(fns, dict(envs_per_worker=per, shared_memory=shm, retry_type=rng.choice(["reset", "renew"]),
                      max_retry=3, retry_waiting_time=0.0, step_timeout=5.0))
    m.seed(seed)
    m.launch()
    seen, delivered = set(), 0
    try:
        for _ in range(300):
            r = rng.random()
            if r < 0.7:
                out = m.step({i: rng.randrange(3) for i in m.ready_obs if rng.random() < 0.8})
                for ts in out.values():
                    delivered += 1
                    if not ts.info.get("abnormal"):
                        assert ts.info["key"] not in seen
                        seen.add(ts.info["key"])
            elif r < 0.75:
                try:
                    os.kill(rng.choice(m.worker_pids), signal.SIGKILL)
                except ProcessLookupError:  # already dead (reaped when another worker started)
                    pass
            elif r < 0.8 and not crashing:  # an env that fails every 13th call cannot replay exactly
                sd = m.state_dict()
                m.step({})
                m.load_state_dict(json.loads(json.dumps(sd)))
            elif r < 0.85:
                m.reset({rng.randrange(5): {"offset": 5}})
            elif r < 0.88:
                m.reset()
            elif r < 0.9:
                m.seed(rng.randrange(100), dynamic_seed=rng.random() < 0.5)
            else:
                acts = set(m.random_action())  # async: more envs may have become ready meanwhile
                assert acts == set(m.ready_obs) if cls is SyncSubprocessEnvManager else acts <= set(m.ready_obs)
        assert delivered > 100
    finally:
        m.close()
    assert worker_children() == set()
