"""The sequence adder against a slow reference on random episode streams with terminations, truncations, crashes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stride.data.adders import EpisodeAdder, NStepTransitionAdder, SequenceAdder, TransitionAdder, episode_end

END_INFO = {
    "terminated": {"terminated": True, "truncated": False},
    "truncated": {"terminated": False, "truncated": True},
    "abnormal": {"abnormal": True},
}

# One episode: (number of real steps, how it ends, rewards). 'open' = the stream stops mid-episode.
episode = st.tuples(
    st.integers(1, 9),
    st.sampled_from(["terminated", "truncated", "abnormal", "legacy_done"]),
    st.lists(st.floats(-10, 10), min_size=9, max_size=9),
)


def feed(adder, episodes, open_tail=0):
    """Drive an adder as a collector would. obs ids are ``100 * episode + t`` (obs[t] before action t)."""
    for e, (steps, end, rewards) in enumerate(episodes):
        adder.add(np.array([100 * e]))  # reset observation
        for t in range(steps):
            last = t == steps - 1
            if last and end == "abnormal":
                adder.add(None, 0.0, True, END_INFO["abnormal"], action=np.array(t))
            elif last:
                info = {} if end == "legacy_done" else END_INFO[end]
                adder.add(np.array([100 * e + t + 1]), rewards[t], True, info, action=np.array(t))
            else:
                adder.add(np.array([100 * e + t + 1]), rewards[t], False, {}, action=np.array(t))
    if open_tail:
        e = len(episodes)
        adder.add(np.array([100 * e]))
        for t in range(open_tail):
            adder.add(np.array([100 * e + t + 1]), 1.0, False, {}, action=np.array(t))


def reference_rows(steps, end, rewards):
    """Full row list (obs id, mask) of one episode as the sequence/episode adders define it."""
    real = steps - 1 if end == "abnormal" else steps
    rows = [dict(obs=t, action=t, reward=rewards[t], done=(t == real - 1 and end in ("terminated", "legacy_done")),
                 start=t == 0, last=False, mask=True) for t in range(real)]
    rows.append(dict(obs=real, action=0, reward=0.0, done=False, start=real == 0, last=True, mask=True))
    return rows


def reference_windows(rows, length, period, behavior):
    """ACME's schedule, computed on the whole episode at once."""
    count = len(rows)
    out = [rows[c - length : c] for c in range(length, count) if (c - length) % period == 0]
    delta = length - count if count <= length else (period - (count - length)) % period
    pad = dict(obs=0, action=0, reward=0.0, done=False, start=False, last=False, mask=False)
    if behavior == "write":
        if count >= length:
            out.append(rows[-length:])
    elif length - delta > 0:
        tail = rows[-(length - delta):]
        out.append(tail + [pad] * delta if behavior == "zero_pad" else tail)
    return out


def unstack(item):
    n = len(item["mask"])
    return [dict(obs=int(item["obs"][i][0]) % 100, action=int(item["action"][i]), reward=float(item["reward"][i]),
                 done=bool(item["done"][i]), start=bool(item["start"][i]), last=bool(item["last"][i]),
                 mask=bool(item["mask"][i])) for i in range(n)]


@settings(max_examples=80, deadline=None)
@given(
    episodes=st.lists(episode, min_size=1, max_size=4),
    length=st.integers(1, 6),
    period=st.integers(1, 7),
    behavior=st.sampled_from(["zero_pad", "truncate", "write"]),
)
def test_sequence_adder_windows_match_reference(episodes, length, period, behavior):
    got = []
    feed(SequenceAdder(got.append, sequence_length=length, period=period, end_of_episode_behavior=behavior), episodes)
    want = []
    for steps, end, rewards in episodes:
        if end == "abnormal" and steps == 1:
            continue  # crashed on its first step: no data at all
        want += reference_windows(reference_rows(steps, end, rewards), length, period, behavior)
    got_rows = [unstack(x) for x in got]
    assert len(got_rows) == len(want)
    for g, w in zip(got_rows, want):
        for gr, wr in zip(g, w):
            assert gr == pytest.approx(wr)
        assert len(g) == len(w)
    for x in got:  # a window never spans two episodes
        episode_ids = {int(o[0]) // 100 for o, m in zip(x["obs"], x["mask"]) if m}
        assert len(episode_ids) == 1


def test_interface_errors():
    with pytest.raises(ValueError, match="first call"):
        SequenceAdder(print, 2, 1).add(0, 1.0, True, {"terminated": True})
    adder = SequenceAdder(lambda x: None, 2, 1)
    adder.add_first(0)
    with pytest.raises(ValueError, match="episode is open"):
        adder.add_first(1)
    adder.reset()
    adder.add_first(1)
    with pytest.raises(ValueError, match="needs the action"):
        seq = SequenceAdder(print, 2, 1)
        seq.add(0)
        seq.add(1, 0.0, False, {})
    with pytest.raises(ValueError, match="never span two episodes"):
        SequenceAdder(print, 2, 1, end_of_episode_behavior="continue")
    with pytest.raises(ValueError, match="sequence_length"):
        SequenceAdder(print, 0, 1)
    with pytest.raises(TypeError, match="callable"):
        SequenceAdder(None, 2, 1)


def test_reset_drops_partial_windows():
    got = []
    adder = SequenceAdder(got.append, sequence_length=3, period=3, end_of_episode_behavior="truncate")
    adder.add(np.array([0]))
    adder.add(np.array([1]), 1.0, False, {}, action=0)
    adder.reset()
    adder.add(np.array([10]))
    adder.add(np.array([11]), 1.0, True, {"terminated": True}, action=0)
    assert [x["obs"][:, 0].tolist() for x in got] == [[10, 11]]


def test_episode_end_classification():
    assert episode_end(False, {"truncated": True}) == "running"
    assert episode_end(True, {"TimeLimit.truncated": True}) == "truncated"
    assert episode_end(True, None) == "terminated"
    assert episode_end(True, {"abnormal": True, "terminated": True}) == "abnormal"


# ---- extras and resumed episodes (what R2D2 stores) -------------------------------------------------
def test_extras_ride_with_their_step():
    seqs = []
    seq = SequenceAdder(seqs.append, sequence_length=5, period=5)
    seq.add(np.array([0]))
    for t in range(2):
        seq.add(np.array([t + 1]), 1.0, t == 1, END_INFO["truncated"] if t == 1 else None, action=t,
                extras={"state": np.array([1.0 + t, 2.0])})
    (item,) = seqs
    # rows: two steps, the final observation (zeros), two padding rows (zeros)
    assert item["state"].tolist() == [[1.0, 2.0], [2.0, 2.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
    assert item["mask"].tolist() == [True, True, True, False, False] and item["last"].tolist() == [False, False, True, False, False]
    with pytest.raises(ValueError, match=r"extras key\(s\) \['reward'\] clash"):
        t_adder = SequenceAdder([].append, 2, 1)
        t_adder.add(np.array([0]))
        t_adder.add(np.array([1]), 0.0, False, None, action=0, extras={"reward": 1})


def test_a_resumed_episode_marks_no_start_row():
    seqs = []
    seq = SequenceAdder(seqs.append, sequence_length=2, period=2)
    seq.add_first(np.array([7]), episode_start=False)
    for t in range(2):
        seq.add(np.array([8 + t]), 0.0, False, None, action=t)
    assert seqs[0]["start"].tolist() == [False, False]
    seq.reset()
    seq.add(np.array([0]))
    seq.add(np.array([1]), 0.0, False, None, action=0)
    seq.add(np.array([2]), 0.0, False, None, action=0)
    assert seqs[1]["start"].tolist() == [True, False]


# ---- the deprecated RL-Flow adders (API.md names kept one release) ----------------------------------
deprecated = pytest.mark.filterwarnings("ignore:.*Adder is deprecated:DeprecationWarning")


def test_deprecated_adders_warn_and_say_what_to_use():
    with pytest.warns(DeprecationWarning, match="TransitionAdder is deprecated.*SampleCollector"):
        TransitionAdder(print)
    with pytest.warns(DeprecationWarning, match="NStepTransitionAdder is deprecated.*get_nstep_return_data"):
        NStepTransitionAdder(print, 2, 0.9)
    with pytest.warns(DeprecationWarning, match="EpisodeAdder is deprecated.*EpisodeCollector"):
        EpisodeAdder(print, 4)
    import stride.data

    assert stride.data.TransitionAdder is TransitionAdder and stride.data.EpisodeAdder is EpisodeAdder


def reference_nstep(episodes, n, gamma, open_tail=0):
    """Straight from the definition, one transition per real step, windows cut at the episode end."""
    out = []
    streams = [(s, end, r) for s, end, r in episodes] + ([(open_tail + 1, "open", [1.0] * (open_tail + 1))] if open_tail else [])
    for e, (steps, end, rewards) in enumerate(streams):
        # A crash drops its step: the episode has steps-1 real steps ending at the last good obs.
        real = steps - 1 if end in ("abnormal", "open") else steps
        for t in range(real):
            k = min(n, real - t)
            if end == "open" and t + n > real:
                continue  # not complete yet
            ret = sum(gamma**i * rewards[t + i] for i in range(k))
            at_end = t + k == real and end != "open"
            if end == "abnormal" and t + n <= real:
                at_end = False  # complete before the crash was known: emitted as a normal transition
            terminated = at_end and end in ("terminated", "legacy_done")
            out.append(dict(obs=100 * e + t, action=t, reward=ret, next_obs=100 * e + t + k, done=terminated,
                            truncated=at_end and not terminated, discount=gamma**k))
    return out


def simplify(items):
    return [dict(obs=int(x["obs"][0]), action=int(x["action"]), reward=x["reward"], next_obs=int(x["next_obs"][0]),
                 done=x["done"], truncated=x["truncated"], discount=x.get("discount")) for x in items]


@deprecated
@settings(max_examples=60, deadline=None)
@given(episodes=st.lists(episode, min_size=1, max_size=5), n=st.integers(1, 5),
       gamma=st.sampled_from([0.0, 0.5, 0.9, 1.0]), open_tail=st.integers(0, 6))
def test_nstep_adder_matches_reference(episodes, n, gamma, open_tail):
    got = []
    feed(NStepTransitionAdder(got.append, n_step=n, discount=gamma), episodes, open_tail)
    want = reference_nstep(episodes, n, gamma, open_tail)
    got = simplify(got)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g["reward"] == pytest.approx(w["reward"], abs=1e-9)
        assert g["discount"] == pytest.approx(w["discount"], abs=1e-12)
        assert {k: g[k] for k in ("obs", "action", "next_obs", "done", "truncated")} == {
            k: w[k] for k in ("obs", "action", "next_obs", "done", "truncated")}
        assert g["next_obs"] // 100 == g["obs"] // 100, "two episodes were chained"


@deprecated
@settings(max_examples=30, deadline=None)
@given(episodes=st.lists(episode, min_size=1, max_size=5), open_tail=st.integers(0, 4))
def test_transition_adder_is_one_step_reference(episodes, open_tail):
    got = []
    feed(TransitionAdder(got.append), episodes, open_tail)
    want = reference_nstep(episodes, 1, 1.0, open_tail)
    assert [{k: v for k, v in g.items() if k != "discount"} for g in simplify(got)] == [
        {k: v for k, v in w.items() if k != "discount"} for w in want]
    assert all(set(x) == {"obs", "action", "reward", "next_obs", "done", "truncated"} for x in got)


@deprecated
def test_nstep_by_hand_truncation_bootstraps_termination_does_not():
    got = []
    adder = NStepTransitionAdder(got.append, n_step=2, discount=0.5)
    adder.add("s0")
    adder.add("s1", 1.0, False, {}, action="a0")
    adder.add("s2", 2.0, False, {}, action="a1", extras={"h": 7})  # s0's window is full: 1 + 0.5 * 2
    adder.add("s3", 4.0, True, {"terminated": False, "truncated": True}, action="a2")
    assert [(x["obs"], x["action"], x["reward"], x["next_obs"], x["done"], x["truncated"], x["discount"]) for x in got] == [
        ("s0", "a0", 2.0, "s2", False, False, 0.25),
        ("s1", "a1", 2.0 + 0.5 * 4.0, "s3", False, True, 0.25),  # cut by the time limit: bootstraps from s3
        ("s2", "a2", 4.0, "s3", False, True, 0.5),
    ]
    assert got[1]["h"] == 7 and "h" not in got[0]
    got.clear()
    adder.add("u0")  # a new episode: nothing of the previous one leaks in
    adder.add("u1", 3.0, False, {}, action="b0")
    adder.add("u2", 5.0, True, {"terminated": True, "truncated": True}, action="b1")  # both: terminated wins
    assert [(x["obs"], x["reward"], x["next_obs"], x["done"], x["truncated"], x["discount"]) for x in got] == [
        ("u0", 3.0 + 0.5 * 5.0, "u2", True, False, 0.25),
        ("u1", 5.0, "u2", True, False, 0.5),
    ]


@deprecated
def test_nstep_adder_is_the_policies_nstep_function():
    """Same numbers as get_nstep_return_data on the episode's one-step transitions (one implementation)."""
    from stride.rl_utils import get_nstep_return_data

    one, got = [], []
    rewards = [0.5, -1.0, 2.0, 3.0, 1.5]
    for adder in (TransitionAdder(one.append), NStepTransitionAdder(got.append, n_step=3, discount=0.9)):
        adder.add(0)
        for t, r in enumerate(rewards):
            adder.add(t + 1, r, t == 4, {"terminated": True} if t == 4 else None, action=t)
    want = get_nstep_return_data(one, 3, 0.9)
    assert [(g["reward"], g["next_obs"], g["done"], g["discount"]) for g in got] == [
        (w["reward"], w["next_obs"], w["done"], w["value_gamma"]) for w in want]


@deprecated
def test_nstep_adder_errors():
    with pytest.raises(ValueError, match="n_step"):
        NStepTransitionAdder(print, 0, 0.9)
    with pytest.raises(ValueError, match="discount"):
        NStepTransitionAdder(print, 1, 1.5)
    adder = NStepTransitionAdder(print, 2, 0.9)
    adder.add(0)
    with pytest.raises(ValueError, match=r"scalar rewards, got shape \(2,\)"):
        adder.add(1, np.array([1.0, 2.0]), False, {}, action=0)


@deprecated
@settings(max_examples=30, deadline=None)
@given(episodes=st.lists(episode, min_size=1, max_size=4), pad=st.booleans())
def test_episode_adder_emits_whole_episodes(episodes, pad):
    got = []
    feed(EpisodeAdder(got.append, max_sequence_length=10, pad_to_max=pad), episodes)
    want = [reference_rows(*ep) for ep in episodes if not (ep[1] == "abnormal" and ep[0] == 1)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        rows = unstack(g)
        if pad:
            assert len(rows) == 10 and not any(r["mask"] for r in rows[len(w):])
        for gr, wr in zip(rows, w):
            assert gr == pytest.approx(wr)
        assert len(rows) == (10 if pad else len(w))


@deprecated
def test_episode_adder_by_hand_and_too_long_episodes():
    got = []
    adder = EpisodeAdder(got.append, max_sequence_length=3)
    adder.add(0)
    adder.add(1, 1.0, False, {}, action=0)
    adder.add(2, 1.0, False, {}, action=1)  # 2 step rows + the final observation row fit in 3
    with pytest.raises(ValueError, match="max_sequence_length=3"):
        adder.add(3, 1.0, False, {}, action=2)  # 3 step rows + the final observation row do not
    adder.add(10)  # the dropped episode does not leak into the next one
    adder.add(11, 1.0, False, {}, action=0)
    adder.add(12, 2.0, True, {"truncated": True}, action=1)  # exactly 3 rows: allowed
    assert len(got) == 1 and [int(o) for o in got[0]["obs"]] == [10, 11, 12]
    assert got[0]["reward"].tolist() == [1.0, 2.0, 0.0]
    assert got[0]["done"].tolist() == [False, False, False]  # truncated: not a termination
    assert got[0]["last"].tolist() == [False, False, True] and got[0]["start"].tolist() == [True, False, False]
