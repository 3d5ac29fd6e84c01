"""stride.data.frame_storage: stacked frames stored once, sampled byte for byte as pushed.

Every check compares against what was pushed: a plain buffer of the same seed (same slots drawn,
same bytes), or the pushed stacks themselves where the frame buffer keeps fewer items."""

from __future__ import annotations

import io
from typing import Dict, List

import numpy as np
import pytest
import torch

from stride.data import AdvancedReplayBuffer, NaiveReplayBuffer
from stride.data.frame_storage import FrameStackStorage, column_storage
from stride.utils.errors import ConfigError
from .stats_refs import with_ids

K = 4
SHAPE = (6, 5)


class Streams:
    """Transitions of ``n_env`` interleaved envs, in segments as the sample collector emits them:
    reset episodes (the first stack repeats one frame, drawn from a small pool shared by the envs),
    life-loss episodes (the first stack continues the previous life's frames), terminations and
    truncations (the last ``next_obs`` is the true next stack), static stretches (a frame equal to
    the one before) and ``nstep`` transitions (``next_obs`` is the stack ``nstep`` steps on)."""

    def __init__(self, n_env: int, seed: int, nstep: int = 1) -> None:
        self.rng = np.random.default_rng(seed)
        self.nstep = nstep
        self.pool = self.rng.integers(0, 256, (3, *SHAPE), dtype=np.uint8)
        self.envs = [self._episode(None) for _ in range(n_env)]

    def _episode(self, prev: "np.ndarray | None") -> List[Dict[str, object]]:
        rng = self.rng
        steps = int(rng.integers(1, 12))
        new = rng.integers(0, 256, (steps + self.nstep, *SHAPE), dtype=np.uint8)
        for t in range(1, len(new)):
            if rng.random() < 0.2:  # a static screen: the same frame again
                new[t] = new[t - 1]
        if prev is not None and rng.random() < 0.4:  # life loss: the stack goes on from the previous life
            frames = np.concatenate([prev[-K:], new])
        else:
            frames = np.concatenate([np.repeat(self.pool[rng.integers(3)][None], K, axis=0), new])
        end = "terminated" if rng.random() < 0.5 else "truncated"
        out = []
        for t in range(steps):
            n = min(self.nstep, steps - t) if end == "terminated" else self.nstep
            out.append({"obs": frames[t:t + K].copy(), "next_obs": frames[t + n:t + n + K].copy(),
                        "action": int(rng.integers(6)), "reward": float(rng.normal()),
                        "done": end == "terminated" and t == steps - 1, "frames": frames})
        return out

    def take(self, n_items: int) -> List[Dict[str, object]]:
        """About ``n_items`` transitions: segments of random envs, each env's in order."""
        out: List[Dict[str, object]] = []
        while len(out) < n_items:
            e = int(self.rng.integers(len(self.envs)))
            queue = self.envs[e]
            cut = int(self.rng.integers(1, 6))
            seg, self.envs[e] = queue[:cut], queue[cut:]
            out.extend({k: v for k, v in it.items() if k != "frames"} for it in seg)
            if not self.envs[e]:
                self.envs[e] = self._episode(seg[-1]["frames"])
        return out


def assert_same(a: "Dict[str, np.ndarray] | None", b: "Dict[str, np.ndarray] | None") -> None:
    assert (a is None) == (b is None)
    if a is None or b is None:
        return
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        assert a[k].tobytes() == b[k].tobytes(), k


@pytest.mark.parametrize("nstep", [1, 3])
@pytest.mark.parametrize("kind", ["naive", "uniform", "prioritized"])
def test_samples_equal_a_plain_buffer_byte_for_byte(kind: str, nstep: int) -> None:
    cls = NaiveReplayBuffer if kind == "naive" else AdvancedReplayBuffer
    cfg: Dict[str, object] = {"replay_buffer_size": 60}
    if kind != "naive":
        cfg["priority"] = kind == "prioritized"
    frame, plain = cls({**cfg, "frame_stack": K}, seed=1), cls(cfg, seed=1)
    streams, rng = Streams(8, seed=nstep, nstep=nstep), np.random.default_rng(2)
    for it in range(40):
        items = streams.take(int(rng.integers(1, 9)))
        for b in (frame, plain):
            b.push(items[0]) if len(items) == 1 else b.push(items)
        assert frame.count() == plain.count()
        if it % 3 == 0:
            assert_same(with_ids(frame.sample_batch(16, it)), with_ids(plain.sample_batch(16, it)))
        else:
            got, want = frame.sample(16, it), plain.sample(16, it)
            assert (got is None) == (want is None)
            for g, w in zip(got or [], want or []):
                assert g.keys() == w.keys() and g["obs"].tobytes() == w["obs"].tobytes()
                assert g["next_obs"].tobytes() == w["next_obs"].tobytes() and g["action"] == w["action"]
        if kind == "prioritized":
            batch = with_ids(plain.sample_batch(8, it))
            assert_same(with_ids(frame.sample_batch(8, it)), batch)
            if batch is None:
                continue
            info = {"replay_unique_id": batch["replay_unique_id"], "replay_buffer_idx": batch["replay_buffer_idx"],
                    "priority": rng.random(8) * 3}
            assert frame.update(info) == plain.update(info) == 8
    storage = frame.storage
    assert isinstance(storage, FrameStackStorage) and not storage.pop_dropped().size
    assert storage.frame_head < 60 * (1 + nstep) + 4 * 60  # far fewer than the 8 frames per item stored in full


def test_one_frame_per_transition_in_long_episodes() -> None:
    s = FrameStackStorage(100, K)
    frames = np.random.default_rng(0).integers(0, 256, (300, *SHAPE), dtype=np.uint8)
    for t in range(200):
        s.append_one({"obs": frames[t:t + K], "next_obs": frames[t + 1:t + 1 + K], "reward": 0.0})
    assert s.frame_head == K + 200  # the first stack, then one new frame per transition
    col_bytes = sum(c.nbytes for c in s.columns.values())
    assert s.frames is not None and s.frames.nbytes == s.frame_capacity * 30
    assert col_bytes == 100 * (2 * K * 8 + 4)  # frame numbers + the reward column
    assert s.nbytes == col_bytes + s.frame_capacity * 30 + 100 * 8  # + each slot's push time
    plain = column_storage(100, 0)
    plain.append_one({"obs": frames[:K], "next_obs": frames[1:1 + K], "reward": 0.0})
    assert plain.nbytes == 100 * (2 * K * 30 + 4)


def test_early_eviction_is_fifo_and_never_samples_lost_frames() -> None:
    """Short episodes of fresh frames use ~k frames per item: with few extra frames the oldest items
    leave early; what stays is exact, what left is never sampled, and the buffers drop it too."""
    cap = 30
    s = FrameStackStorage(cap, K, extra_frames=2 * K)
    streams, pushed = Streams(3, seed=5), {}
    for n in range(12):
        for it in streams.take(7):
            slot = s.append_one(it)
            pushed[slot] = it
        live = s.valid_slots()
        got = s.get_columns(live)
        for i, slot in enumerate(live.tolist()):
            assert got["obs"][i].tobytes() == pushed[slot]["obs"].tobytes()
            assert got["next_obs"][i].tobytes() == pushed[slot]["next_obs"].tobytes()
    assert s.size < cap  # early eviction happened
    rng = np.random.default_rng(0)  # items of 8 fresh frames each: the default frame ring runs short
    for cls in (NaiveReplayBuffer, AdvancedReplayBuffer):
        b = cls({"replay_buffer_size": cap, "frame_stack": K}, seed=0)
        truth = {}
        for _ in range(15):
            items = [{"obs": rng.integers(0, 256, (K, *SHAPE), dtype=np.uint8),
                      "next_obs": rng.integers(0, 256, (K, *SHAPE), dtype=np.uint8)} for _ in range(5)]
            b.push(items)
            truth.update({b.next_id - len(items) + i: it for i, it in enumerate(items)})
            batch = with_ids(b.sample_batch(min(4, b.count()), 0))
            for uid, obs, nxt in zip(batch["replay_unique_id"], batch["obs"], batch["next_obs"]):
                assert obs.tobytes() == truth[int(uid)]["obs"].tobytes()
                assert nxt.tobytes() == truth[int(uid)]["next_obs"].tobytes()
            live = b.storage.valid_slots()
            assert (b.unique_ids[live] >= 0).all() and b.count() == len(live)
        assert b.count() < cap
        if isinstance(b, AdvancedReplayBuffer):
            assert b.monitor_info()["removed_frames"] > 0


def test_max_use_and_staleness_as_plain() -> None:
    cfg = {"replay_buffer_size": 40, "priority": False, "max_use": 2}
    frame, plain = AdvancedReplayBuffer({**cfg, "frame_stack": K}, seed=3), AdvancedReplayBuffer(cfg, seed=3)
    streams = Streams(4, seed=9)
    for it in range(20):
        items = streams.take(5)
        frame.push(items)
        plain.push(items)
        assert_same(with_ids(frame.sample_batch(6, it)), with_ids(plain.sample_batch(6, it)))
        assert frame.count() == plain.count()


@pytest.mark.parametrize("src_frames,dst_frames", [(True, True), (True, False), (False, True)])
def test_save_load_data_between_frame_and_plain_buffers(tmp_path, src_frames: bool, dst_frames: bool) -> None:
    for cls in (NaiveReplayBuffer, AdvancedReplayBuffer):
        src = cls({"replay_buffer_size": 50, "frame_stack": K if src_frames else 0}, seed=0)
        src.push(Streams(5, seed=11).take(80))
        path = str(tmp_path / f"{cls.__name__}.npz")
        src.save_data(path)
        for cap in (50, 20):
            dst = cls({"replay_buffer_size": cap, "frame_stack": K if dst_frames else 0}, seed=0)
            dst.load_data(path)
            a = src.storage.get_columns(src.storage.valid_slots()[-cap:])
            b = dst.storage.get_columns(dst.storage.valid_slots())
            assert_same(a, b)
            assert dst.unique_ids[dst.storage.valid_slots()].tolist() == \
                src.unique_ids[src.storage.valid_slots()[-cap:]].tolist()
    if src_frames:  # compact: frame numbers plus the frames, not full stacks
        assert (tmp_path / "NaiveReplayBuffer.npz").stat().st_size < 50 * 2 * K * 30


@pytest.mark.parametrize("cls", [NaiveReplayBuffer, AdvancedReplayBuffer])
def test_checkpoint_resume_continues_exactly(cls) -> None:
    cfg = {"replay_buffer_size": 40, "frame_stack": K}
    a = cls(cfg, seed=4)
    streams = Streams(4, seed=13)
    a.push(streams.take(70))
    with_ids(a.sample_batch(8, 1))
    buf = io.BytesIO()
    torch.save(a.state_dict(), buf)
    buf.seek(0)
    b = cls(cfg, seed=99)
    b.load_state_dict(torch.load(buf, weights_only=True))
    more = streams.take(30)
    for it in range(6):
        a.push(more[it * 5:(it + 1) * 5])
        b.push(more[it * 5:(it + 1) * 5])
        assert_same(with_ids(a.sample_batch(8, it)), with_ids(b.sample_batch(8, it)))
    assert a.storage.frame_head == b.storage.frame_head  # the same frames found again: nothing stored twice


def test_bad_input_is_one_clear_line() -> None:
    with pytest.raises(ConfigError, match="frame_stack=1 .*valid choices"):
        column_storage(10, 1)
    with pytest.raises(ConfigError, match="frame_stack=4 needs storage.type 'memory'"):
        AdvancedReplayBuffer({"frame_stack": 4, "storage": {"type": "file"}})
    b = NaiveReplayBuffer({"replay_buffer_size": 5, "frame_stack": K})
    with pytest.raises(ValueError, match=r"frame_stack=4 needs 'obs' .* got shape \(3, 6, 5\)"):
        b.push({"obs": np.zeros((3, *SHAPE), np.uint8), "next_obs": np.zeros((3, *SHAPE), np.uint8)})
    with pytest.raises(ValueError, match=r"lacks \['next_obs'\]"):
        b.push({"obs": np.zeros((K, *SHAPE), np.uint8)})
    b.push({"obs": np.zeros((K, *SHAPE), np.uint8), "next_obs": np.zeros((K, *SHAPE), np.uint8)})
    with pytest.raises(ValueError, match="dtype float32 but the buffer stores"):
        b.push({"obs": np.zeros((K, *SHAPE), np.float32), "next_obs": np.zeros((K, *SHAPE), np.float32)})
    assert b.count() == 1
    good = {"obs": np.ones((K, *SHAPE), np.uint8), "next_obs": np.ones((K, *SHAPE), np.uint8)}
    with pytest.raises(ValueError, match="field 'obs'|shape"):  # a refused batch writes no frame
        b.push([good, {"obs": np.ones((K, 2), np.uint8), "next_obs": np.ones((K, 2), np.uint8)}])
    r = NaiveReplayBuffer({"replay_buffer_size": 5, "frame_stack": K})
    r.push({**good, "reward": 1.0})
    head = r.storage.frame_head
    with pytest.raises(ValueError):  # (the column storage's own message for a ragged field)
        r.push([{"obs": np.full((K, *SHAPE), 2, np.uint8), "next_obs": np.full((K, *SHAPE), 3, np.uint8),
                 "reward": 1.0}, {**good, "reward": np.zeros(2)}])
    assert r.count() == 1 and r.storage.frame_head == head
