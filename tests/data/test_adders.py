"""The sequence adder against a slow reference on random episode streams with terminations, truncations, crashes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stride.data.adders import SequenceAdder, episode_end

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
