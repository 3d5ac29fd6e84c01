"""stride.data.buffer.AdvancedReplayBuffer: contract, PER bookkeeping, eviction, rate control, monitor,
file storage, persistence."""

from __future__ import annotations

import os
import zipfile

import numpy as np
import pytest
import torch

from stride.data import AdvancedReplayBuffer, NaiveReplayBuffer, create_buffer
from stride.utils.errors import ConfigError
from stride.worker import AdvancedReplayBuffer as WorkerAdvanced
from .stats_refs import with_ids


def item(i: int) -> dict:
    return {"obs": np.full(3, i, dtype=np.float32), "action": i % 4, "reward": float(i) / 2, "done": i % 5 == 0}


def buf(cap: int = 10, seed: int = 0, **cfg) -> AdvancedReplayBuffer:
    return AdvancedReplayBuffer({"replay_buffer_size": cap, **cfg}, seed=seed)


def live_actions(b: AdvancedReplayBuffer) -> list:
    return b.storage.get_columns(b.live_slots())["obs"][:, 0].astype(int).tolist()


# ---- config / construction ---------------------------------------------------------------------
def test_default_config_every_key_commented_and_registry():
    import inspect

    import stride.data.buffer.advanced as mod

    cfg = AdvancedReplayBuffer.default_config()
    assert cfg["type"] == "advanced"
    src = inspect.getsource(mod.AdvancedReplayBuffer.default_config)
    lines = src.splitlines()
    for i, line in enumerate(lines):  # every key (but type and sub-dicts) has a "# (type) meaning" comment above it
        s = line.strip()
        if "=" in s and not s.startswith("#") and not s.startswith("type=\"advanced\"") and not s.endswith("dict(") \
                and not s.startswith("return") and not s.startswith("def"):
            prev = lines[i - 1].strip()
            j = i - 1
            while prev.startswith("#") and not prev.startswith("# ("):
                j -= 1
                prev = lines[j].strip()
            assert prev.startswith("# ("), f"key line without a '# (type) meaning' comment: {s}"
    assert isinstance(create_buffer({"type": "advanced", "replay_buffer_size": 4}), AdvancedReplayBuffer)
    assert WorkerAdvanced is AdvancedReplayBuffer
    with pytest.raises(ConfigError, match="alfa"):
        AdvancedReplayBuffer({"alfa": 0.5})
    with pytest.raises(ConfigError, match="rate_limiter.kind"):
        AdvancedReplayBuffer({"rate_limiter": {"kind": "x"}})
    with pytest.raises(ConfigError, match="valid choices"):
        AdvancedReplayBuffer({"rate_limiter": {"type": "blocking"}})
    with pytest.raises(ConfigError, match="valid choices"):
        AdvancedReplayBuffer({"storage": {"type": "redis"}})


def test_compile_config_uses_advanced_defaults():
    from stride.config import compile_config
    from stride.zoo.cartpole.config.cartpole_dqn_per_config import create_config, main_config

    cfg = compile_config(main_config, create_cfg=create_config, save_cfg=False)
    rb = cfg.policy.other.replay_buffer
    assert rb.type == "advanced" and rb.replay_buffer_size == 20000 and rb.alpha == 0.6
    assert cfg.policy.priority and cfg.policy.priority_IS_weight
    assert isinstance(create_buffer(rb, seed=0), AdvancedReplayBuffer)


# ---- push / FIFO / overflow ---------------------------------------------------------------------
def test_push_one_and_many_fifo_and_long_push_keeps_newest():
    b = buf(5)
    assert b.push(item(0)) == 1
    b.push([item(i) for i in range(1, 4)])
    assert b.count() == len(b) == 4
    b.push([item(i) for i in range(4, 8)])
    assert b.count() == 5 and live_actions(b) == [3, 4, 5, 6, 7]
    b.push([item(i) for i in range(100, 112)])  # longer than the capacity
    assert b.count() == 5 and live_actions(b) == [107, 108, 109, 110, 111]
    ids = b.unique_ids[b.live_slots()].tolist()
    assert ids == [15, 16, 17, 18, 19]  # ids count every pushed item
    info = b.monitor_info()
    assert info["pushed"] == 20 and info["removed"] == 15 and info["pushed"] - info["removed"] == b.count()


def test_meta_keys_not_stored_and_initial_priority():
    b = buf(4)
    b.push([{**item(0), "priority": 5.0, "replay_unique_id": 99, "IS": 0.1}, {**item(1), "priority": 0.5}])
    assert set(b.storage.columns) == {"obs", "action", "reward", "done"}
    assert b.priorities[:2].tolist() == [5.0, 0.5] and b.max_priority == 5.0
    b.push(item(2))  # no priority: the current max
    assert b.priorities[2] == 5.0


def test_sample_list_of_dicts_and_batch_columns():
    b = buf(8)
    assert b.sample(2) is None and with_ids(b.sample_batch(2)) is None
    b.push([item(i) for i in range(8)])
    s = b.sample(5, cur_learner_iter=0)
    assert isinstance(s, list) and len(s) == 5
    for d in s:
        assert set(d) == {"obs", "action", "reward", "done", "replay_unique_id", "replay_buffer_idx", "IS"}
        assert isinstance(d["replay_unique_id"], int) and isinstance(d["replay_buffer_idx"], int)
        assert int(d["obs"][0]) == d["replay_unique_id"] and d["IS"] == pytest.approx(1.0)
    bb = with_ids(b.sample_batch(6, cur_learner_iter=0))
    assert bb["obs"].shape == (6, 3) and bb["obs"].dtype == np.float32
    assert bb["replay_unique_id"].dtype == np.int64 and bb["IS"].dtype == np.float32
    np.testing.assert_array_equal(bb["obs"][:, 0].astype(int), bb["replay_unique_id"])
    assert b.sample(9) is None  # more than stored


def test_uniform_mode_has_no_is_and_ignores_update():
    b = buf(6, priority=False)
    b.push([item(i) for i in range(6)])
    s = with_ids(b.sample_batch(4))
    assert "IS" not in s
    assert b.update({"replay_unique_id": s["replay_unique_id"], "replay_buffer_idx": s["replay_buffer_idx"],
                     "priority": [1, 2, 3, 4]}) == 0


def test_min_sample_size():
    b = buf(10, min_sample_size=5)
    b.push([item(i) for i in range(4)])
    assert with_ids(b.sample_batch(2)) is None and b.monitor_info()["sample_insufficient"] == 1
    b.push(item(4))
    assert with_ids(b.sample_batch(2)) is not None


# ---- priorities -----------------------------------------------------------------------------------
def test_update_sets_priority_and_ignores_stale_ids():
    b = buf(4, alpha=1.0)
    b.push([item(i) for i in range(4)])
    s = with_ids(b.sample_batch(4))
    b.push([item(10), item(11)])  # overwrite slots 0 and 1 (ids 0, 1)
    info = {"replay_unique_id": [0, 1, 2, 3], "replay_buffer_idx": [0, 1, 2, 3], "priority": [9.0, 9.0, 2.0, 3.0]}
    assert b.update(info) == 2  # ids 0 and 1 no longer sit in their slots
    assert b.priorities.tolist() == [1.0, 1.0, 2.0, 3.0]
    assert b.max_priority == 3.0
    b.push(item(12))  # new item: current max priority
    assert b.priorities[2] == 3.0
    # torch tensors and a repeated slot (last wins)
    assert b.update({"replay_unique_id": [3, 3], "replay_buffer_idx": [3, 3], "priority": torch.tensor([7.0, 0.0])}) == 2
    assert b.priorities[3] == pytest.approx(1e-6)  # raised to min_priority: still sampleable
    assert b.priority_table.sampler.weights(np.array([3]))[0] == pytest.approx(1e-6 ** 1.0)
    with pytest.raises(ValueError, match="finite"):
        b.update({"replay_unique_id": [2], "replay_buffer_idx": [2], "priority": [float("nan")]})
    with pytest.raises(ValueError, match="ids"):
        b.update({"replay_unique_id": [2, 3], "replay_buffer_idx": [2], "priority": [1.0]})
    assert s is not None


def test_is_weights_formula_and_beta_annealing():
    """i.i.d. batches (replace=True): IS_i = (N P(i))^-beta / max_j; distinct batches: tests/data/test_replay_batches.py."""
    b = buf(4, alpha=0.5, beta=0.4, anneal_step=10, replace=True)
    b.push([{**item(i), "priority": float(i + 1)} for i in range(4)])
    w = np.array([1.0, 2.0, 3.0, 4.0]) ** 0.5
    p = w / w.sum()
    for k in range(12):
        beta = min(1.0, 0.4 + 0.6 * k / 10)
        assert b.beta == pytest.approx(beta)
        s = with_ids(b.sample_batch(4))
        expect = (4 * p[s["replay_buffer_idx"]]) ** -beta / (4 * p.min()) ** -beta
        np.testing.assert_allclose(s["IS"], expect, rtol=1e-5)
        assert (s["IS"] <= 1.0 + 1e-6).all()
    assert b.beta == 1.0


def test_evicted_items_never_sampled_and_zero_is_never_returned():
    b = buf(6, max_use=1)
    b.push([item(i) for i in range(6)])
    seen = []
    while b.count():
        s = with_ids(b.sample_batch(1))
        seen.append(int(s["replay_unique_id"][0]))
    assert sorted(seen) == list(range(6))  # each sampled exactly once, then evicted
    assert with_ids(b.sample_batch(1)) is None


# ---- max_use / staleness ----------------------------------------------------------------------------
def test_max_use_counts_every_copy_and_caps_the_batch():
    b = buf(2, max_use=3, alpha=1.0, replace=True)
    b.push([{**item(0), "priority": 1e-6}, {**item(1), "priority": 1e6}])  # item 1 drawn almost surely
    s = with_ids(b.sample_batch(2))
    assert s["replay_unique_id"].tolist() == [1, 1] and b.count() == 2 and b.use_counts[1] == 2
    s = with_ids(b.sample_batch(2))  # one use left: the second copy is drawn again from the others, then item 1 goes
    assert s["replay_unique_id"].tolist() == [1, 0] and b.count() == 1 and b.live_slots().tolist() == [0]
    assert b.monitor_info()["removed_max_use"] == 1 and b.use_counts[0] == 1


def test_staleness_eviction_and_collect_iter_sources():
    b = buf(10, max_staleness=5)
    b.push([item(0), item(1)], collect_iter=0)
    b.push([{**item(2), "collect_iter": 3}])
    with_ids(b.sample_batch(1, cur_learner_iter=5))  # staleness 5, 5, 2: nothing evicted (evict when > 5)
    assert b.count() == 3
    b.push(item(3))  # stamped with the latest learner iter seen (5)
    assert b.collect_iters[3] == 5
    with_ids(b.sample_batch(1, cur_learner_iter=6))
    assert b.count() == 2 and sorted(live_actions(b)) == [2, 3]
    assert b.monitor_info()["removed_staleness"] == 2
    with_ids(b.sample_batch(1, cur_learner_iter=100))  # everything too old: evicted, then too few to sample
    assert b.count() == 0


def test_holes_are_refilled_by_the_ring_and_uniform_skips_them():
    b = buf(4, priority=False, max_use=1)
    b.push([item(i) for i in range(4)])
    s = with_ids(b.sample_batch(1))
    gone = int(s["replay_unique_id"][0])
    assert b.count() == 3
    for _ in range(50):
        assert gone not in with_ids(b.sample_batch(1))["replay_unique_id"].tolist() or b.count() < 3
        b.push(item(100))  # keeps the ring moving
    assert b.count() <= 4


# ---- rate control (never blocks) ----------------------------------------------------------------
def test_rate_limiter_refuses_samples_and_drops_pushes_without_blocking():
    b = buf(100, rate_limiter=dict(type="sample_to_insert_ratio", samples_per_insert=1.0, min_size_to_sample=4,
                                   error_buffer=4.0))
    b.push([item(i) for i in range(3)])
    assert with_ids(b.sample_batch(2)) is None and b.monitor_info()["sample_refused"] == 1  # below min size
    b.push(item(3))
    assert with_ids(b.sample_batch(2)) is not None
    # offset = 4: error = inserts - samples must stay in [0, 8]
    accepted = b.push([item(i) for i in range(10, 20)])
    assert accepted < 10 and b.monitor_info()["push_refused"] == 10 - accepted
    assert b.rate_limiter.error <= b.rate_limiter.max_diff
    # the loop can always make progress by sampling
    for _ in range(3):
        assert with_ids(b.sample_batch(2)) is not None
    assert b.push(item(50)) == 1


def test_min_size_limiter():
    b = buf(10, rate_limiter=dict(type="min_size", min_size_to_sample=3))
    b.push([item(0), item(1)])
    assert b.sample(1) is None
    b.push(item(2))
    assert len(b.sample(3)) == 3


# ---- monitor -------------------------------------------------------------------------------------
class FakeTB:
    def __init__(self):
        self.scalars = []

    def add_scalar(self, tag, value, step):
        self.scalars.append((tag, value, step))


def test_monitor_counts_and_periodic_tb_log(tmp_path):
    tb = FakeTB()
    b = AdvancedReplayBuffer({"replay_buffer_size": 8, "monitor": {"log_freq": 2}}, seed=0, tb_logger=tb,
                             exp_name=str(tmp_path))
    b.push([item(i) for i in range(10)])
    with_ids(b.sample_batch(3, cur_learner_iter=7))
    assert not tb.scalars
    b.sample(2, cur_learner_iter=8)
    tags = {t for t, _, _ in tb.scalars}
    assert "buffer_iter/buffer_pushed" in tags and "buffer_iter/buffer_sample_per_sec" in tags
    assert all(step == 8 for _, _, step in tb.scalars)
    info = b.monitor_info()
    assert info["pushed"] == 10 and info["sampled"] == 5 and info["removed_overwrite"] == 2 and info["count"] == 8
    log = (tmp_path / "log" / "buffer.txt").read_text()
    assert "pushed=10" in log and "sampled=5" in log
    b.log_monitor(9)
    assert any(step == 9 for _, _, step in tb.scalars)


# ---- file storage ------------------------------------------------------------------------------
def test_file_storage_keeps_only_metadata_and_cleans_up(tmp_path):
    b = AdvancedReplayBuffer({"replay_buffer_size": 4, "max_use": 2, "storage": {"type": "file", "path": str(tmp_path)}},
                             seed=0)
    folder = b.file_folder
    assert folder.startswith(str(tmp_path))
    b.push([item(i) for i in range(3)])
    assert len(os.listdir(folder)) == 3 and not getattr(b.storage, "columns", None)
    b.push([item(i) for i in range(3, 6)])  # overwrites 2: their files go
    assert len(os.listdir(folder)) == 4 == b.count()
    s = b.sample(3)
    assert all(int(d["obs"][0]) == d["replay_unique_id"] for d in s)
    bb = with_ids(b.sample_batch(2))
    assert bb["obs"].shape == (2, 3)
    with_ids(b.sample_batch(4))  # some reach max_use=2
    assert len(os.listdir(folder)) == b.count()
    b.clear()
    assert os.listdir(folder) == []
    b.push(item(7))
    b.close()
    assert not os.path.exists(folder) and os.listdir(tmp_path) == []


def test_file_storage_refuses_python_objects():
    b = AdvancedReplayBuffer({"replay_buffer_size": 4, "storage": {"type": "file"}})
    with pytest.raises(ValueError, match="info"):
        b.push({"obs": np.zeros(2), "info": {"a": 1}})
    b.close()


def test_file_storage_save_load_and_state_dict(tmp_path):
    cfg = {"replay_buffer_size": 6, "storage": {"type": "file", "path": str(tmp_path / "f")}}
    a = AdvancedReplayBuffer(cfg, seed=1)
    a.push([item(i) for i in range(8)])
    a.update({"replay_unique_id": [4], "replay_buffer_idx": [int(np.flatnonzero(a.unique_ids == 4)[0])], "priority": [3.0]})
    a.save_data(str(tmp_path / "d.npz"))
    b = AdvancedReplayBuffer({**cfg, "storage": {"type": "memory"}}, seed=1)
    b.load_data(str(tmp_path / "d.npz"))
    assert live_actions(b) == live_actions(a) == list(range(2, 8))
    sd = a.state_dict()
    c = AdvancedReplayBuffer(cfg, seed=5)
    c.load_state_dict(sd)
    for _ in range(5):
        np.testing.assert_array_equal(with_ids(a.sample_batch(4))["obs"], with_ids(c.sample_batch(4))["obs"])
    assert len(os.listdir(c.file_folder)) == c.count()
    a.close()
    c.close()


# ---- persistence ------------------------------------------------------------------------------
def test_save_load_npz_no_pickle_restores_priorities_and_ids(tmp_path):
    a = buf(5, alpha=1.0)
    a.push([item(i) for i in range(7)])
    s = with_ids(a.sample_batch(5))
    a.update({**{k: s[k] for k in ("replay_unique_id", "replay_buffer_idx")}, "priority": np.arange(5) + 2.0})
    path = str(tmp_path / "buf.npz")
    a.save_data(path)
    with zipfile.ZipFile(path) as z:
        assert all(n.endswith(".npy") for n in z.namelist())
    np.load(path, allow_pickle=False).close()
    b = buf(5, alpha=1.0)
    b.load_data(path)
    order_a, order_b = a.live_slots(), b.live_slots()
    assert a.unique_ids[order_a].tolist() == b.unique_ids[order_b].tolist()
    np.testing.assert_array_equal(a.priorities[order_a], b.priorities[order_b])
    assert b.max_priority == a.max_priority and b.next_id == a.next_id
    b.push(item(50))
    assert b.unique_ids[b.live_slots()][-1] == a.next_id
    smaller = buf(3, alpha=1.0)
    smaller.load_data(path)
    assert smaller.unique_ids[smaller.live_slots()].tolist() == a.unique_ids[order_a].tolist()[-3:]


def test_state_dict_exact_resume_after_wrap_and_evictions(tmp_path):
    cfg = dict(max_use=3, alpha=0.7, anneal_step=20)
    a = buf(8, seed=3, **cfg)
    a.push([item(i) for i in range(11)])
    for k in range(4):
        s = with_ids(a.sample_batch(4, cur_learner_iter=k))
        a.update({**{x: s[x] for x in ("replay_unique_id", "replay_buffer_idx")}, "priority": np.arange(4) + k + 1.0})
    sd = a.state_dict()
    path = tmp_path / "ckpt.pt"
    torch.save(sd, path)
    sd2 = torch.load(path, weights_only=True)
    b = buf(8, seed=99, **cfg)
    b.load_state_dict(sd2)
    for k in range(4, 12):
        sa, sb = with_ids(a.sample_batch(4, cur_learner_iter=k)), with_ids(b.sample_batch(4, cur_learner_iter=k))
        if sa is None:
            assert sb is None
        else:
            for key in sa:
                np.testing.assert_array_equal(sa[key], sb[key])
            info = {**{x: sa[x] for x in ("replay_unique_id", "replay_buffer_idx")}, "priority": np.ones(4) * k}
            a.update(info)
            b.update(info)
        a.push(item(100 + k))
        b.push(item(100 + k))
    assert a.monitor_info()["pushed"] == b.monitor_info()["pushed"] and a.beta == b.beta


def test_clear_and_close():
    b = buf(4)
    b.push([item(i) for i in range(4)])
    b.clear()
    assert b.count() == 0 and b.sample(1) is None
    b.push(item(9))
    assert b.count() == 1 and b.priorities[b.live_slots()][0] == 1.0
    b.close()
    assert b.count() == 0


def test_same_contract_as_naive():
    for b in (NaiveReplayBuffer({"replay_buffer_size": 5}, seed=0), buf(5, priority=False)):
        b.push([item(i) for i in range(5)])
        s = b.sample(3, 0)
        assert {"replay_unique_id", "replay_buffer_idx"} <= set(s[0])
        bb = with_ids(b.sample_batch(3, 0))
        assert bb["obs"].shape == (3, 3)
        b.update({"replay_unique_id": [0], "replay_buffer_idx": [0], "priority": [1.0]})
        assert b.count() == 5


class _PriorityPolicy:
    """A learn mode that returns |obs[0] - 3| + 0.5 per sample as its priority (like DQN's |TD error|)."""

    def forward(self, batch):
        return {"total_loss": 0.0, "priority": np.abs(np.asarray(batch["obs"])[:, 0] - 3.0) + 0.5}


def test_learner_priority_loop_through_buffer_with_the_ticket():
    """(batch, ticket) -> BaseLearner.train(batch) -> buffer.update(ticket, learner.priority), as serial_pipeline
    does with priority=True; the policy's batch holds no buffer ids."""
    from stride.worker import BaseLearner

    learner = BaseLearner({}, _PriorityPolicy())
    b = buf(16, alpha=1.0)
    b.push([item(i) for i in range(16)])
    for _ in range(20):
        batch, ticket = b.sample_batch(8, learner.train_iter)
        learner.train(batch)
        assert not {"replay_unique_id", "replay_buffer_idx"} & set(batch)
        assert b.update(ticket, learner.priority) == 8
    live = b.live_slots()
    touched = b.priorities[live] != 1.0  # items whose priority came back from the learner
    expect = np.abs(b.storage.get_columns(live)["obs"][:, 0] - 3.0) + 0.5
    np.testing.assert_allclose(b.priorities[live][touched], expect[touched])
    assert touched.sum() >= 8


def test_update_slot_index_from_the_end_and_past_the_end():
    b = buf(70, alpha=1.0)  # capacity not a multiple of the sampler's block size
    b.push([item(i) for i in range(70)])
    assert b.update({"replay_unique_id": [69, 3], "replay_buffer_idx": [-1, -67], "priority": [7.0, 5.0]}) == 2
    assert b.priorities[69] == 7.0 and b.priorities[3] == 5.0
    assert b.priority_table.sampler.weights(np.array([69, 3])).tolist() == [7.0, 5.0]
    assert b.priority_table.sampler.total() == pytest.approx(68 + 7.0 + 5.0)
    with pytest.raises(IndexError):
        b.update({"replay_unique_id": [1], "replay_buffer_idx": [70], "priority": [2.0]})


@pytest.mark.filterwarnings("ignore:PrioritizedSelector is deprecated:DeprecationWarning")
def test_split_modules_keep_public_names():
    import stride.data as data
    from stride.data import block_sampler, priority
    from stride.data.buffer import advanced
    from stride.data.rate_limiters import MinSize

    assert data.AdvancedReplayBuffer is advanced.AdvancedReplayBuffer
    assert advanced.BlockSumSampler is block_sampler.BlockSumSampler
    assert isinstance(data.PrioritizedSelector(rng=0).table, priority.PriorityTable)  # (the buffer's own part)
    b = buf(4, max_use=2, max_staleness=3, rate_limiter=dict(type="min_size", min_size_to_sample=1))
    assert isinstance(b.rate_limiter, MinSize)
    assert not hasattr(advanced, "AdvancedPersistence")  # persistence is the buffer's own, through its parts' public API


def test_metadata_views_are_read_only():
    b = buf(4, max_use=3)
    b.push([item(i) for i in range(3)])
    for view in (b.unique_ids, b.priorities, b.use_counts, b.collect_iters):
        with pytest.raises(ValueError, match="read-only"):
            view[0] = 7
    assert b.unique_ids[:3].tolist() == [0, 1, 2] and b.next_id == 3


def test_rate_limiter_numbers_must_be_numbers():
    from stride.data.buffer.rate_control import RateLimiterConfig, build_limiter
    from stride.utils.errors import ConfigError

    assert build_limiter(RateLimiterConfig(type="min_size", min_size_to_sample=3)).min_size_to_sample == 3
    with pytest.raises(ConfigError, match="rate_limiter.min_size_to_sample' must be an integer"):
        AdvancedReplayBuffer({"rate_limiter": {"type": "min_size", "min_size_to_sample": "3"}})
