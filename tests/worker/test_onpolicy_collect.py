"""On-policy collection: every returned sample comes from this call; nothing is kept for the next."""

from __future__ import annotations

from stride.worker import SampleCollector

from .stride_worker_fakes import key, make_manager, make_policy


def test_on_policy_collect_emits_partial_segments_and_keeps_nothing():
    policy = make_policy(on_policy=True)
    env = make_manager(3, length=7)
    env.seed(0)
    collector = SampleCollector({}, env, policy.collect_mode)
    seen = set()
    for _ in range(4):
        before = collector.envstep
        data = collector.collect(n_sample=10, policy_kwargs={"eps": 0.5})
        stepped = collector.envstep - before
        assert len(data) >= 10 and len(data) == stepped  # every transition of this call, no more, no less
        keys = {key(d["obs"]) for d in data}
        assert not keys & seen, "a transition was delivered twice"
        seen |= keys
        assert all(not t for t in collector._traj.values()) and collector._surplus == []
    env.close()


def test_off_policy_collect_returns_exactly_n_sample_and_keeps_the_rest():
    policy = make_policy()
    env = make_manager(3, length=7)
    env.seed(0)
    collector = SampleCollector({}, env, policy.collect_mode)
    total = sum(len(collector.collect(n_sample=10, policy_kwargs={"eps": 0.5})) for _ in range(4))
    assert total == 40
    env.close()
