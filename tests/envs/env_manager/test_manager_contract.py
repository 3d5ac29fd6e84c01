"""The env-manager contract, checked on all three managers (subprocess ones with shared memory on
and off): seeding, auto-reset with the true final observation, episode counting, exact resume."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stride.utils.errors import ConfigError, InvalidActionError, StrideError

CASES = [
    ("base", True),
    ("subprocess", True),
    ("subprocess", False),
    ("async_subprocess", True),
    ("async_subprocess", False),
]
IDS = [f"{k}-{'shm' if s else 'pipe'}" for k, s in CASES]


def _policy(env_id: int, t: int) -> int:
    return (env_id + t) % 3


def _run(m, steps: int, start: int = 0) -> dict:
    """Step ready envs until each env has ``steps`` results (async managers return a few per call);
    per env: the stream of (obs, reward, done, next episode's first obs)."""
    streams = {i: [] for i in range(m.env_num)}
    for _ in range(steps * 50):
        if min(len(v) for v in streams.values()) >= steps or m.done:
            break
        ready = m.ready_obs
        actions = {i: _policy(i, start + len(streams[i])) for i in ready}  # per-env progress only
        for i, ts in m.step(actions).items():
            after = m.ready_obs.get(i) if ts.done else None
            streams[i].append((_plain(ts.obs), ts.reward, ts.done, _plain(after)))
    return streams


def _plain(obs):
    if obs is None:
        return None
    if isinstance(obs, dict):
        return {k: v.tolist() for k, v in obs.items()}
    return np.asarray(obs).tolist()


def _prefix_equal(a: dict, b: dict) -> None:
    """Async managers deliver different amounts per env: compare each env's common prefix."""
    for i in a:
        n = min(len(a[i]), len(b[i]))
        assert n >= 20
        assert a[i][:n] == b[i][:n], f"env {i} differs"


@pytest.mark.parametrize("kind,shm", CASES, ids=IDS)
def test_seeding_is_deterministic_and_matches_base(make_manager, kind, shm):
    def streams(seed, k=kind):
        m = make_manager(k, shared_memory=shm)
        m.seed(seed)
        m.launch()
        out = _run(m, 60)
        m.close()
        return out

    a, b, c = streams(0), streams(0), streams(1)
    _prefix_equal(a, b)
    assert a[0][:20] != c[0][:20]
    _prefix_equal(a, streams(0, "base"))  # every manager sees the same episodes as the base one


@pytest.mark.parametrize("kind,shm", CASES, ids=IDS)
def test_auto_reset_keeps_the_true_final_obs(make_manager, kind, shm):
    m = make_manager(kind, n=3, shared_memory=shm, env_kwargs=dict(min_len=3, max_len=6))
    m.seed(3)
    m.launch()
    episodes = {i: 0 for i in range(3)}
    sent = {}  # the obs each env had when it was last given an action
    for _ in range(400):
        if min(episodes.values()) >= 3:
            break
        ready = m.ready_obs
        sent.update({i: np.array(o) for i, o in ready.items()})
        for i, ts in m.step({i: 1 for i in ready}).items():
            # action 1 adds one to the state and t advances: every obs entry grows by 2
            np.testing.assert_array_equal(ts.obs, sent[i] + 2)
            if ts.done:
                episodes[i] += 1
                assert ts.info["truncated"] is True and ts.info["terminated"] is False
                assert ts.info["eval_episode_return"] == sum(range(1, ts.info["key"][2] + 1))
                first = m.ready_obs[i]
                assert not np.array_equal(first, ts.obs)  # a new episode's first obs, not the final one
                np.testing.assert_array_equal(first - first[0], np.arange(3) * 0.5)
            else:
                np.testing.assert_array_equal(m.ready_obs[i], ts.obs)
    assert all(v >= 3 for v in episodes.values())


@pytest.mark.parametrize("kind,shm", CASES, ids=IDS)
def test_episode_num_and_done(make_manager, kind, shm):
    m = make_manager(kind, n=3, shared_memory=shm, episode_num=2, env_kwargs=dict(min_len=2, max_len=5))
    m.seed(0)
    m.launch()
    ends = {i: 0 for i in range(3)}
    for _ in range(100):
        if m.done:
            break
        assert not m.done
        for i, ts in m.step({i: 0 for i in m.ready_obs}).items():
            ends[i] += ts.done
    assert m.done
    assert ends == {0: 2, 1: 2, 2: 2}
    assert m.ready_obs == {}
    m.reset()
    assert not m.done and sorted(m.ready_obs) == [0, 1, 2]


@pytest.mark.parametrize("kind,shm", CASES, ids=IDS)
def test_state_dict_round_trip_resumes_exactly(make_manager, kind, shm):
    m = make_manager(kind, n=3, shared_memory=shm, env_kwargs=dict(min_len=8, max_len=20))
    m.seed(5)
    m.launch()
    _run(m, 13)
    sd = m.state_dict()
    json.dumps(sd)  # plain values only (checkpoints load with weights_only)
    ready_then = {i: _plain(o) for i, o in m.ready_obs.items()}
    if kind == "async_subprocess":
        m.step({})  # results of steps sent before the snapshot are still owed to this caller, not to a restored one
    a = _run(m, 30, start=100)

    m2 = make_manager(kind, n=3, shared_memory=shm, env_kwargs=dict(min_len=8, max_len=20))
    m2.seed(99)
    m2.launch()
    _run(m2, 4)
    m2.load_state_dict(json.loads(json.dumps(sd)))
    assert {i: _plain(o) for i, o in m2.ready_obs.items()} == ready_then
    b = _run(m2, 30, start=100)
    if kind == "async_subprocess":
        _prefix_equal(a, b)
    else:
        assert a == b


@pytest.mark.parametrize("kind", ["subprocess", "async_subprocess"])
@pytest.mark.parametrize("dtype", ["uint8", "int16", "int64", "float16", "float64", "bool"])
def test_box_dtypes_through_shared_memory(make_manager, kind, dtype):
    env_kwargs = dict(dtype=dtype, shape=(2, 3))
    ref = make_manager("base", n=2, env_kwargs=env_kwargs)
    m = make_manager(kind, n=2, env_kwargs=env_kwargs, shared_memory=True, envs_per_worker=2)
    for x in (ref, m):
        x.seed(1)
        x.launch()
    for obs in m.ready_obs.values():
        assert obs.dtype == np.dtype(dtype) and obs.shape == (2, 3)
    _prefix_equal(_run(ref, 25), _run(m, 25))


@pytest.mark.parametrize("kind,shm", CASES[1:], ids=IDS[1:])
def test_dict_obs(make_manager, kind, shm):
    ref = make_manager("base", n=2, env_kwargs=dict(obs="dict"))
    m = make_manager(kind, n=2, env_kwargs=dict(obs="dict"), shared_memory=shm)
    for x in (ref, m):
        x.seed(2)
        x.launch()
    obs = m.ready_obs[0]
    assert {k: v.dtype for k, v in obs.items()} == {k: v.dtype for k, v in ref.ready_obs[0].items()}
    _prefix_equal(_run(ref, 25), _run(m, 25))


@pytest.mark.parametrize("kind,shm", CASES, ids=IDS)
def test_invalid_action_is_a_user_error_and_the_env_stays_usable(make_manager, kind, shm):
    m = make_manager(kind, n=2, shared_memory=shm, max_retry=3)
    m.seed(0)
    m.launch()
    before = np.array(m.ready_obs[0])
    with pytest.raises(InvalidActionError, match="outside the action space"):
        m.step({0: 7})
    np.testing.assert_array_equal(m.ready_obs[0], before)
    ts = m.step({0: 1})[0] if kind != "async_subprocess" else _step_until(m, 0, 1)
    np.testing.assert_array_equal(ts.obs, before + 2)
    assert m.state_dict()["episodes"][0]["actions"] == [1]


def _step_until(m, env_id, action):
    out = m.step({env_id: action})
    while env_id not in out:
        out = m.step({})
    return out[env_id]


@pytest.mark.parametrize("kind", ["base", "subprocess", "async_subprocess"])
def test_config_is_checked(make_manager, kind):
    with pytest.raises(ConfigError, match="unknown config key 'env.manager.shared_memroy'"):
        make_manager(kind, shared_memroy=True)
    with pytest.raises(ConfigError, match="retry_type"):
        make_manager(kind, retry_type="respawn")


@pytest.mark.parametrize("kind", ["subprocess", "async_subprocess"])
def test_closed_manager_refuses_and_close_is_idempotent(make_manager, kind):
    m = make_manager(kind, n=2)
    m.launch()
    with pytest.raises(StrideError, match="already launched"):
        m.launch()
    m.close()
    m.close()
    with pytest.raises(StrideError, match="closed"):
        m.step({0: 0})
    m.launch()  # a closed manager can be launched again
    assert sorted(m.ready_obs) == [0, 1]


@pytest.mark.parametrize("kind", ["subprocess", "async_subprocess"])
def test_random_action_and_reset_param(make_manager, kind):
    m = make_manager(kind, n=2, envs_per_worker=2)
    m.seed(0)
    m.launch()
    acts = m.random_action()
    assert sorted(acts) == [0, 1] and all(a in (0, 1, 2) for a in acts.values())
    base = np.array(m.ready_obs[1])
    m.reset({1: {"offset": 1000}})
    # reset_param: the env's next episode starts from an offset state; kept for later resets
    assert m.ready_obs[1][0] >= 1000 > base[0]


@pytest.mark.parametrize("kind,shm", CASES, ids=IDS)
def test_stepping_an_env_that_is_not_ready_is_refused_without_side_effects(make_manager, kind, shm):
    m = make_manager(kind, n=2, shared_memory=shm)
    m.seed(0)
    m.launch()
    before = {i: np.array(o) for i, o in m.ready_obs.items()}
    with pytest.raises(StrideError, match="env 5 is not ready"):
        m.step({0: 1, 5: 1})
    assert sorted(m.ready_obs) == [0, 1]
    np.testing.assert_array_equal(m.ready_obs[0], before[0])
    assert m.state_dict()["episodes"][0]["actions"] == []


@pytest.mark.parametrize("context", ["spawn", "fork"])
def test_other_start_methods(make_manager, context):
    ref = make_manager("base", n=2)
    m = make_manager("subprocess", n=2, context=context)
    for x in (ref, m):
        x.seed(4)
        x.launch()
    _prefix_equal(_run(ref, 20), _run(m, 20))


def test_copy_on_get_false_returns_views_into_shared_memory(make_manager):
    m = make_manager("subprocess", n=1, copy_on_get=False)
    m.seed(0)
    m.launch()
    view = m.ready_obs[0]
    first = np.array(view)
    m.step({0: 1})
    np.testing.assert_array_equal(view, first + 2)  # the slot was overwritten in place
    c = make_manager("subprocess", n=1)
    c.seed(0)
    c.launch()
    kept = c.ready_obs[0]
    c.step({0: 1})
    np.testing.assert_array_equal(kept, first)  # the default hands out copies


@pytest.mark.parametrize("kind,shm", CASES, ids=IDS)
def test_ready_obs_stays_in_env_id_order(make_manager, kind, shm):
    m = make_manager(kind, n=4, shared_memory=shm, env_kwargs=dict(min_len=2, max_len=7))
    m.seed(0)
    m.launch()
    rng = np.random.default_rng(0)
    for _ in range(40):
        ready = m.ready_obs
        assert list(ready) == sorted(ready)
        m.step({i: 1 for i in ready if rng.random() < 0.7})  # subsets: histories differ per env
