"""SampleCollector and EpisodeCollector on deterministic ChainEnvs (observations = [env, episode, t])."""

from __future__ import annotations

from collections import defaultdict

import pytest

from stride.utils.errors import ConfigError
from stride.worker import EpisodeCollector, SampleCollector, create_collector
from .stride_worker_fakes import key, make_manager, make_policy

EPS = {"eps": 0.5}


@pytest.fixture
def managers():
    made = []

    def _make(n, **kw):
        m = make_manager(n, **kw)
        made.append(m)
        return m

    yield _make
    for m in made:
        m.close()


def env_steps(manager) -> int:
    return sum(e.step_calls for e in manager._envs)


def generated(manager, length) -> set:
    """Every (env, episode, t) the envs have produced a step for (finished episodes and the current one)."""
    out = set()
    for e in manager._envs:
        for ep in range(e.episode):
            out |= {(e.env_idx, ep, t) for t in range(length)}
        out |= {(e.env_idx, e.episode, t) for t in range(e.t)}
    return out


# ---- SampleCollector ----------------------------------------------------------------------------
def test_sample_collector_returns_exactly_n_and_counts_env_steps(managers):
    env = managers(3, length=4)
    c = SampleCollector(None, env, make_policy().collect_mode)
    emitted = []
    for n in (10, 7, 1, 12, 5):
        out = c.collect(n_sample=n, policy_kwargs=EPS)
        assert len(out) == n
        assert c.envstep == env_steps(env)
        emitted += out
    assert len(c.collect(policy_kwargs=EPS)) == 8  # policy.collect.n_sample
    for d in emitted:
        assert {"obs", "action", "reward", "next_obs", "done"} <= set(d)
        o, n = key(d["obs"]), key(d["next_obs"])
        assert n[:2] == o[:2] and n[2] == o[2] + 1 and d["reward"] == o[2] + 1
        assert d["done"] == (n[2] == 4)


def test_sample_collector_loses_and_duplicates_nothing(managers):
    """Every env step ends up exactly once in: returned samples, the kept surplus, or a pending segment."""
    env = managers(3, length=4)
    c = SampleCollector(None, env, make_policy().collect_mode)
    emitted = [key(d["obs"]) for n in (10, 3, 9, 4) for d in c.collect(n_sample=n, policy_kwargs=EPS)]
    assert len(set(emitted)) == len(emitted)
    pending = [key(d["obs"]) for d in c._surplus] + [key(d["obs"]) for t in c._traj.values() for d in t]
    assert set(emitted).isdisjoint(pending)
    assert set(emitted) | set(pending) == generated(env, 4)
    assert len(emitted) + len(pending) == c.envstep


def test_sample_collector_keeps_surplus_for_next_call(managers):
    env = managers(3, length=4)
    c = SampleCollector(None, env, make_policy().collect_mode)
    first = c.collect(n_sample=10, policy_kwargs=EPS)  # 3 envs x 4 steps finish 12 samples at once: 2 extra
    steps = c.envstep
    second = c.collect(n_sample=2, policy_kwargs=EPS)
    assert c.envstep == steps  # served from the surplus, no env step
    assert len(second) == 2
    assert {key(d["obs"]) for d in first}.isdisjoint({key(d["obs"]) for d in second})
    assert {key(d["obs"]) for d in first} | {key(d["obs"]) for d in second} == generated(env, 4)


def test_sample_collector_drops_abnormal_episode(managers):
    # env 1 crashes on its 6th step call: the 2nd step of its episode 1
    env = managers(3, length=4, fail_at={1: 6})
    c = SampleCollector(None, env, make_policy().collect_mode)
    got = [key(d["obs"]) for _ in range(6) for d in c.collect(n_sample=6, policy_kwargs=EPS)]
    assert env._envs[1].step_calls > 6  # the crash happened and the env went on
    assert not [k for k in got if k[:2] == (1, 1)]  # nothing of the crashed episode
    assert {(1, 0, t) for t in range(4)} <= set(got) and {(1, 2, t) for t in range(4)} <= set(got)
    assert {(0, 1, t) for t in range(4)} <= set(got)  # other envs unaffected
    for d in c._surplus:
        assert key(d["obs"])[:2] != (1, 1)
    assert c.envstep == env_steps(env)


def _expected_nstep(k: tuple, length: int, gamma: float, n: int, truncate: bool) -> tuple:
    env_idx, ep, t = k
    m = min(n, length - t)
    reward = sum(gamma ** j * (t + j + 1) for j in range(m))
    return reward, (env_idx, ep, t + m), (t + m == length) and not truncate, gamma ** m


@pytest.mark.parametrize("truncate", [False, True])
def test_sample_collector_nstep_windows_not_cut_at_segment_boundaries(managers, truncate):
    """n-step data equals n-step returns computed over whole episodes, although segments are cut every
    ceil(n_sample / env_num) = 2 steps (DI-engine truncates the windows at each cut)."""
    gamma, n = 0.5, 3

    def length(i, ep):
        return 5 + (i + ep) % 4

    env = managers(2, length=length, truncate=truncate)
    policy = make_policy(nstep=n, discount_factor=gamma, collect={"n_sample": 4})
    c = SampleCollector(None, env, policy.collect_mode)
    samples = [d for _ in range(20) for d in c.collect(policy_kwargs=EPS)]
    assert len(samples) == 80
    keys = [key(d["obs"]) for d in samples]
    assert len(set(keys)) == len(keys)
    full_windows_mid_episode = 0
    for d, k in zip(samples, keys):
        L = length(k[0], k[1])
        reward, next_key, done, vg = _expected_nstep(k, L, gamma, n, truncate)
        assert d["reward"] == pytest.approx(reward), k
        assert key(d["next_obs"]) == next_key, k
        assert bool(d["done"]) == done, k
        assert d["value_gamma"] == pytest.approx(vg), k
        full_windows_mid_episode += k[2] + n < L
    assert full_windows_mid_episode > 20
    # no transition lost: every step of a finished episode was emitted, kept or pending
    pending = [key(d["obs"]) for d in c._surplus] + [key(d["obs"]) for t in c._traj.values() for d in t]
    every = set()
    for e in env._envs:
        for ep in range(e.episode):
            every |= {(e.env_idx, ep, t) for t in range(length(e.env_idx, ep))}
        every |= {(e.env_idx, e.episode, t) for t in range(e.t)}
    assert set(keys) | set(pending) == every


def test_sample_collector_needs_n_sample(managers):
    c = SampleCollector(None, managers(1), make_policy(collect={"n_sample": None, "n_episode": 2}).collect_mode)
    with pytest.raises(ConfigError, match="n_sample"):
        c.collect()


def test_collector_unknown_config_key(managers):
    with pytest.raises(ConfigError, match="collect_print_frq"):
        SampleCollector({"collect_print_frq": 3}, managers(1), make_policy().collect_mode)


def test_reset_env_and_policy(managers):
    env1, env2 = managers(2, length=3), managers(1, length=3)
    c = SampleCollector(None, env1, make_policy().collect_mode)
    assert not env1.closed  # launched by the collector
    c.collect(n_sample=3, policy_kwargs=EPS)
    c.reset_env(env2)
    assert not env2.closed
    out = c.collect(n_sample=5, policy_kwargs=EPS)
    assert all(key(d["obs"])[0] == 0 for d in out) and len(out) == 5
    assert all(key(d["obs"])[1] >= 0 for d in out)
    p2 = make_policy(seed=3, collect={"n_sample": 2})
    c.reset_policy(p2.collect_mode)
    assert len(c.collect(policy_kwargs=EPS)) == 2


def test_create_collector(managers):
    policy = make_policy()
    assert isinstance(create_collector({"type": "sample"}, managers(1), policy.collect_mode), SampleCollector)
    assert isinstance(create_collector({"type": "episode"}, managers(1), policy.collect_mode), EpisodeCollector)
    with pytest.raises(ConfigError, match="valid choices"):
        create_collector({"type": "sampel"}, managers(1), policy.collect_mode)


# ---- EpisodeCollector ---------------------------------------------------------------------------
def test_episode_collector_returns_whole_episodes(managers):
    def length(i, ep):
        return 2 + 3 * i + ep % 2

    env = managers(2, length=length)
    c = EpisodeCollector(None, env, make_policy().collect_mode)
    seen = []
    for n in (3, 2, 4):
        episodes = c.collect(n_episode=n, policy_kwargs=EPS)
        assert len(episodes) == n
        for ep in episodes:
            keys = [key(d["obs"]) for d in ep]
            env_idx, ep_idx = keys[0][:2]
            assert keys == [(env_idx, ep_idx, t) for t in range(length(env_idx, ep_idx))]
            assert [bool(d["done"]) for d in ep] == [False] * (len(ep) - 1) + [True]
            seen.append((env_idx, ep_idx))
    assert len(set(seen)) == len(seen) == 9
    kept = [tuple(key(ep[0]["obs"])[:2]) for ep in c._extra]
    finished = {(e.env_idx, k) for e in env._envs for k in range(e.episode)}
    assert set(seen) | set(kept) == finished  # nothing lost
    assert c.envstep == env_steps(env)


def test_episode_collector_train_samples(managers):
    env = managers(2, length=4)
    c = EpisodeCollector({"get_train_sample": True}, env, make_policy(nstep=2, discount_factor=0.5).collect_mode)
    episodes = c.collect(n_episode=2, policy_kwargs=EPS)
    for ep in episodes:
        assert [d["reward"] for d in ep] == [1 + 0.5 * 2, 2 + 0.5 * 3, 3 + 0.5 * 4, 4.0]
        assert [d["value_gamma"] for d in ep] == [0.25, 0.25, 0.25, 0.5]


def test_episode_collector_drops_abnormal_episode(managers):
    env = managers(2, length=3, fail_at={0: 5})  # env 0 crashes in episode 1
    c = EpisodeCollector(None, env, make_policy().collect_mode)
    episodes = c.collect(n_episode=6, policy_kwargs=EPS)
    ids = [key(ep[0]["obs"])[:2] for ep in episodes]
    assert (0, 1) not in ids and (0, 0) in ids and (0, 2) in ids
    assert all(len(ep) == 3 for ep in episodes)


def test_episode_collector_needs_n_episode(managers):
    c = EpisodeCollector(None, managers(1), make_policy().collect_mode)
    with pytest.raises(ConfigError, match="n_episode"):
        c.collect()


class FakeTB:
    def __init__(self):
        self.scalars = defaultdict(list)

    def add_scalar(self, tag, value, step):
        self.scalars[tag].append((step, value))


def test_collector_logs_episode_stats(managers):
    env = managers(2, length=4)
    tb = FakeTB()
    c = EpisodeCollector(None, env, make_policy().collect_mode, tb_logger=tb)
    c.collect(n_episode=4, train_iter=0, policy_kwargs=EPS)
    assert tb.scalars["collector_iter/reward_mean"] == [(0, pytest.approx(1 + 2 + 3 + 4))]
    assert tb.scalars["collector_iter/episode_length_mean"] == [(0, 4)]
    assert tb.scalars["collector_step/episode_count"][0][0] == c.envstep
    assert c.episode_count >= 4
    c.collect(n_episode=2, train_iter=50, policy_kwargs=EPS)  # < collect_print_freq iterations later: no log
    assert len(tb.scalars["collector_iter/reward_mean"]) == 1
    c.collect(n_episode=2, train_iter=100, policy_kwargs=EPS)
    assert [s for s, _ in tb.scalars["collector_iter/reward_mean"]] == [0, 100]


def test_a_collector_without_env_says_so():
    from stride.utils.errors import StrideError

    collector = SampleCollector({})
    with pytest.raises(StrideError, match="no env manager"):
        collector.action_space


def test_sample_transforms_apply_in_order_to_the_samples_returned(managers):
    def tag(samples):
        return samples + [dict(s, tagged=True) for s in samples]

    def count(samples):
        return samples + [{"n": len(samples)}]

    c = create_collector({"type": "sample"}, managers(2), make_policy().collect_mode, sample_transforms=[tag, count])
    data = c.collect(n_sample=4, policy_kwargs=EPS)
    assert len(data) == 9 and data[-1] == {"n": 8}
    assert [s.get("tagged", False) for s in data[:8]] == [False] * 4 + [True] * 4
    assert [key(s["obs"]) for s in data[4:8]] == [key(s["obs"]) for s in data[:4]]
    assert len(c.collect(n_sample=4, policy_kwargs=EPS)) == 9   # the surplus kept holds no transformed sample


def _keep(samples):
    return samples


def test_sample_transforms_are_refused_where_they_cannot_apply(managers):
    on_policy = SampleCollector(None, managers(1), make_policy(on_policy=True).collect_mode, sample_transforms=[_keep])
    with pytest.raises(ConfigError, match=r"sample transforms \(_keep\) need an off-policy policy"):
        on_policy.collect(n_sample=2)
    with pytest.raises(ConfigError, match="EpisodeCollector applies no sample transforms"):
        EpisodeCollector(None, managers(1), make_policy().collect_mode, sample_transforms=[_keep])


def test_the_seeds_collectors_run_on_a_compiled_dqn_config():
    """The seeds' example: both collectors take ``cfg.policy.collect.collector`` of a compiled config
    (no collector key of one env family in it) and collect."""
    from stride.config import compile_config
    from stride.entry.utils import build_env_manager, build_policy
    from stride.zoo.cartpole.config.cartpole_dqn_config import create_config, main_config

    cfg = compile_config(main_config, create_config, save_cfg=False)
    cfg.env.collector_env_num = 2
    policy = build_policy(cfg)
    env = build_env_manager(cfg, 0)
    try:
        samples = SampleCollector(cfg.policy.collect.collector, env, policy.collect_mode).collect(n_sample=4)
        assert len(samples) == 4 and {"obs", "action", "reward", "next_obs"} <= set(samples[0])
        episodes = EpisodeCollector(cfg.policy.collect.collector, env, policy.collect_mode).collect(n_episode=1)
        assert len(episodes) == 1 and episodes[0][-1]["done"]
    finally:
        env.close()
