"""The parallel roles in-process (no Ray): the same calls the coordinator makes on the actors."""

from __future__ import annotations

import copy
import logging
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from stride.config import compile_config
from stride.entry.parallel.counters import Counters
from stride.entry.parallel.roles import CollectorRole, LearnerRole, ReplayRole, read_snapshot
from stride.entry.parallel.system import compile_system_config, cpus_needed
from stride.entry.parallel.tags import BatchTag
from stride.utils.errors import ConfigError, StrideError
from stride.utils.narrow import as_mapping
from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as par


@pytest.fixture()
def cfg(tmp_path):
    main = copy.deepcopy(par.main_config)
    main["policy"]["learn"]["batch_size"] = 8
    c = compile_config(main, create_cfg=copy.deepcopy(par.create_config), seed=3, exp_name=str(tmp_path / "exp"),
                       save_cfg=False)
    return c


def test_collect_push_sample_train_and_broadcast(cfg):
    collector = CollectorRole(cfg, "collector0", index=0)
    replay = ReplayRole(cfg, snapshot_path=None)
    learner = LearnerRole(cfg)
    meta, data = collector.collect(None, 0, envstep=0, train_iter=0)
    assert meta["tag"] == BatchTag("collector0", 0, 0, 0) and meta["envstep"] >= 8 and len(data) == 8
    assert replay.push(data, 8, tag=meta["tag"])["admitted"]
    again = replay.push(data, 8, tag=meta["tag"])  # a retried push: not stored twice
    assert not again["admitted"] and again["duplicates"] == 1 and replay.count() == 8
    out = learner.train(replay.sample(2, 8, 0), envstep=8)
    assert out["train_iter"] == 2
    weights = learner.collect_state()
    meta2, _ = collector.collect(weights, out["train_iter"], envstep=8, train_iter=2)
    assert meta2["tag"] == BatchTag("collector0", 0, 1, 2)  # next number, collected with iteration-2 weights
    # the collector now acts with the learner's trained weights, which differ from its initial ones
    loaded, trained = collector.collect_state()["model"], learner.learn_state()["model"]
    assert loaded.keys() == trained.keys() and all(torch.equal(loaded[k], trained[k]) for k in loaded)
    fresh = CollectorRole(cfg, "collector0", index=0).collect_state()["model"]
    assert not all(torch.equal(fresh[k], trained[k]) for k in fresh)


def test_learner_skips_refused_batches_and_respects_the_iteration_limit(cfg):
    learner = LearnerRole(cfg)
    replay = ReplayRole(cfg, snapshot_path=None)
    assert learner.train(replay.sample(3, 8, 0), envstep=0)["train_iter"] == 0  # empty buffer: None batches
    collector = CollectorRole(cfg, "collector0", index=0)
    meta, data = collector.collect(None, 0, 0, 0)
    replay.push(data, 8, tag=meta["tag"])
    assert learner.train(replay.sample(3, 8, 0), envstep=8, max_train_iter=2)["train_iter"] == 2


@pytest.mark.parametrize("algo", ["ppo", "a2c"])
def test_on_policy_learner_trains_each_fresh_unroll_once_and_drops_stale_ones(algo, tmp_path):
    """train_fresh: one BaseLearner.train per unroll (one train_iter), an unroll more than
    max_staleness versions old dropped and counted, a repeated tag never trained on twice."""
    from stride.zoo.cartpole.config import cartpole_a2c_config
    from stride.zoo.cartpole.config.parallel import cartpole_ppo_config

    zoo = {"ppo": cartpole_ppo_config, "a2c": cartpole_a2c_config}[algo]
    main = copy.deepcopy(zoo.main_config)
    main["env"]["collector_env_num"] = 2
    main["policy"]["collect"]["n_sample"] = 32
    c = compile_config(main, create_cfg=copy.deepcopy(zoo.create_config), seed=3, exp_name=str(tmp_path / algo),
                       save_cfg=False)
    assert c.policy.on_policy
    learner, collector = LearnerRole(c), CollectorRole(c, "collector0", index=0)
    meta, data = collector.collect(learner.collect_state(), 0, envstep=0, train_iter=0)  # the learner's weights, v0
    assert len(data) >= 32 and meta["tag"].policy_iter == 0
    out = learner.train_fresh(meta["tag"], data, 32, max_staleness=1)
    assert out["trained"] and out["train_iter"] == 1 and out["staleness"] == 0 and out["admitted"]
    again = learner.train_fresh(meta["tag"], data, 32, max_staleness=1)  # a retried call: a duplicate
    assert not again["trained"] and again["duplicates"] == 1 and again["train_iter"] == 1
    old = [collector.collect(None, 0, envstep=32, train_iter=0) for _ in range(2)]  # still the v0 weights
    one_behind = learner.train_fresh(old[0][0]["tag"], old[0][1], 64, max_staleness=1)
    assert one_behind["trained"] and one_behind["staleness"] == 1 and one_behind["train_iter"] == 2
    two_behind = learner.train_fresh(old[1][0]["tag"], old[1][1], 96, max_staleness=1)
    assert not two_behind["trained"] and two_behind["staleness"] == 2 and two_behind["train_iter"] == 2
    assert two_behind["stale_dropped"] == 1 and learner.summary()["stale_dropped"] == 1
    meta4, data4 = collector.collect(learner.collect_state(), 2, envstep=96, train_iter=2)
    assert learner.train_fresh(meta4["tag"], data4, 128, max_staleness=0, max_train_iter=2)["trained"] is False  # at the limit
    assert learner.summary()["stored"] == 4 and learner.summary()["duplicates"] == 1


def _r2d2_cfg(tmp_path, algo="r2d2", data_path=None):
    from stride.zoo.cartpole.config import cartpole_pomdp_r2d2_config as zoo

    main = copy.deepcopy(zoo.main_config)
    main["env"]["collector_env_num"] = 2
    main["policy"].update(burnin_step=2, learn_unroll_len=4, nstep=1)  # sequences of 7 rows, one every 4 steps
    main["policy"]["learn"]["batch_size"] = 4
    if data_path is not None:
        main["policy"]["collect"].update(data_path=data_path, demo_fraction=0.25)
    create = copy.deepcopy(zoo.create_config)
    create["policy"]["type"] = algo
    return compile_config(main, create_cfg=create, seed=0, exp_name=str(tmp_path / algo), save_cfg=False)


def test_r2d2_collector_carries_each_envs_recurrent_state_across_collects_and_weight_loads(tmp_path):
    """A collector actor keeps its policy, so an episode's LSTM state goes on across collects (and
    across the broadcast weights it loads between them): every sequence's stored ``prev_state`` is
    the state its predecessor's first ``learn_unroll_len`` rows lead to, across the collect boundary;
    the replay keeps the sequences whole and the learner trains on them with their priorities."""
    from stride.entry.utils import build_policy

    c = _r2d2_cfg(tmp_path)
    collector, replay, learner = CollectorRole(c, "collector0", index=0), ReplayRole(c, None), LearnerRole(c)
    first = collector.collect(None, 0, envstep=0, train_iter=0)
    weights = collector.collect_state()
    second = collector.collect(weights, 1, envstep=32, train_iter=1)  # a broadcast load between the collects
    policy = build_policy(c, enable_field=["collect"])
    policy.collect_mode.load_state_dict(weights)
    seqs = [(0, s) for s in first[1]] + [(1, s) for s in second[1]]
    for _, s in seqs:
        assert s["obs"].shape == (7, 2) and s["mask"].shape == (7,) and s["prev_state"].shape == (128,)
        assert bool(np.any(s["prev_state"])) != bool(s["start"])  # zeros exactly where an episode starts
    checked = set()
    for ka, a in seqs:
        for kb, b in seqs:
            if b["start"] or a["mask"][:5].sum() < 5 or not np.array_equal(b["obs"][0], a["obs"][4]):
                continue
            with torch.no_grad():
                state = policy.model(torch.as_tensor(a["obs"][:4]).unsqueeze(1),
                                     torch.as_tensor(a["prev_state"]).unsqueeze(0))["next_state"][0]
            assert torch.allclose(state, torch.as_tensor(b["prev_state"]), atol=1e-6), (ka, kb)
            checked.add((ka, kb))
    assert (0, 1) in checked and (1, 1) in checked  # an episode's chain went on into the second collect
    for meta, data in (first, second):
        replay.push(data, 32, tag=meta["tag"])
    batches = replay.sample(2, 4, 0)
    assert all(b is not None and b[0]["obs"].shape == (4, 7, 2) and b[0]["prev_state"].shape == (4, 128)
               for b in batches)
    out = learner.train(batches, envstep=64)
    assert out["train_iter"] == 2 and len(out["priorities"]) == 2
    assert all(len(t.ids) == len(p) == 4 for t, p in out["priorities"])
    replay.update_all(out["priorities"])


def test_r2d3_replay_mixes_the_demonstrations_in(tmp_path):
    """policy.collect.data_path on the parallel pipeline: the replay actor holds the demonstrations
    beside the agent's sequences, as the serial pipeline does, and a batch holds both."""
    from stride.zoo.cartpole import HideVelocity
    from tests.zoo.demo_helpers import random_demo

    demo = random_demo("CartPole-v1", str(tmp_path / "demo"), episodes=4, wrap=HideVelocity)
    c = _r2d2_cfg(tmp_path, "r2d3", data_path=demo)
    collector, replay, learner = CollectorRole(c, "collector0", index=0), ReplayRole(c, None), LearnerRole(c)
    meta, data = collector.collect(None, 0, envstep=0, train_iter=0)
    replay.push(data, 32, tag=meta["tag"])
    sampled = replay.sample(1, 4, 0)[0]
    assert sampled is not None and sampled[0]["prev_state"].shape == (4, 128)
    ids = sampled[1].ids
    assert (ids < 0).sum() == 1 and (ids >= 0).sum() == 3  # a quarter of demonstrations (demo_fraction 0.25)
    out = learner.train([sampled], envstep=32)
    replay.update_all(out["priorities"])
    assert out["train_iter"] == 1


def test_replay_snapshot_restores_buffer_and_ledger_and_the_driver_counts_what_a_restart_lost(cfg, tmp_path, capsys):
    """The replay restarted from its snapshot (as Ray restarts a killed replay actor): the batch it
    took after the snapshot is lost, said in one stderr line (batches and items) and counted as a
    gap; stored + gaps = batches the driver routed."""
    path = str(tmp_path / "snap.pth.tar")
    counters = Counters(logging.getLogger("test_roles"), None)
    replay = ReplayRole(cfg, snapshot_path=path, snapshot_freq=2)
    collector = CollectorRole(cfg, "collector1", index=1)
    batches = [collector.collect(None, 0, 0, 0) for _ in range(3)]
    for meta, data in batches:
        counters.record(meta["tag"], replay.push(data, 8, tag=meta["tag"]), 0, 8)
    assert os.path.isfile(path)  # written after the 2nd stored batch, not after the 3rd
    restored = ReplayRole(cfg, snapshot_path=path, snapshot_freq=2)
    assert restored.restored and restored.count() == 16
    assert not restored.push(batches[1][1], 8, tag=batches[1][0]["tag"])["admitted"]  # in the snapshot: duplicate
    meta, data = collector.collect(None, 0, 0, 0)  # seq 3: seq 2 (taken after the snapshot) counts as lost
    verdict = restored.push(data, 8, tag=meta["tag"])
    assert verdict["admitted"] and verdict["gap"] == 1 and verdict["gaps"] == 1
    counters.record(meta["tag"], {**verdict, "pid": verdict["pid"] + 1}, 0, 8)  # a new process's (here: the same one)
    lines = [line for line in capsys.readouterr().err.splitlines() if "replay actor was restarted" in line]
    assert len(lines) == 1 and "lost the 1 batch(es) (8 items) stored since" in lines[0], lines
    totals = counters.summary(restored.summary())
    assert totals["replay_lost_batches"] == 1 == totals["gaps"] and totals["replay_lost_items"] == 8
    assert totals["batches_stored"] + totals["gaps"] == totals["batches"] == 4 and totals["replay_restarts"] == 1


def test_a_resumed_replay_starts_its_collectors_above_the_incarnations_it_saw(cfg, tmp_path):
    """A resumed run's replay loads the snapshot its last run took as it ended; its collectors are new
    incarnations (numbered above the ledger's), so their batches 0, 1, ... are stored, not duplicates."""
    path = str(tmp_path / "snap.pth.tar")
    replay = ReplayRole(cfg, snapshot_path=path)
    first, replaced = CollectorRole(cfg, "collector0", index=0), CollectorRole(cfg, "collector1", index=1, incarnation=2)
    for collector in (first, first, replaced):
        meta, data = collector.collect(None, 0, 0, 0)
        replay.push(data, 8, tag=meta["tag"])
    replay.snapshot()  # what the coordinator's summary() does as every run ends
    resumed = ReplayRole(cfg, snapshot_path=path)
    assert resumed.restored and resumed.count() == 24
    assert resumed.incarnations() == {"collector0": 0, "collector1": 2}
    fresh = CollectorRole(cfg, "collector0", index=0, incarnation=resumed.incarnations()["collector0"] + 1)
    meta, data = fresh.collect(None, 0, 0, 0)
    assert meta["tag"].seq == 0 and resumed.push(data, 8, tag=meta["tag"])["admitted"] and resumed.count() == 32


def test_a_resumed_learner_goes_on_and_keeps_the_drivers_components(cfg):
    """The learner's checkpoint holds the driver's components (the coordinator's counters, the clock,
    the evaluator) and the run's env steps; a learner built from it goes on with the same weights,
    optimiser and iteration, and its next checkpoints carry those components until new ones come."""
    replay = ReplayRole(cfg, snapshot_path=None)
    meta, data = CollectorRole(cfg, "collector0", index=0).collect(None, 0, 0, 0)
    replay.push(data, 8, tag=meta["tag"])
    learner = LearnerRole(cfg)
    learner.train(replay.sample(3, 8, 0), envstep=8)
    learner.hold("clock", {"wall_seconds": 12.5})
    path = learner.save_checkpoint(envstep=40)  # the coordinator's env steps, ahead of the last train call's
    assert path is not None and torch.load(path, weights_only=True)["envstep"] == 40
    resumed = LearnerRole(cfg, resume_ckpt=path)
    assert resumed.train_iter == 3
    with pytest.raises(StrideError, match=r"trained already \(train_iter 3\) and cannot take the checkpoint"):
        learner.resume(path)  # (-m dist: a learner process that served another coordinator)
    a, b = learner.learn_state(), resumed.learn_state()
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
    assert a["optimizer"]["state"].keys() == b["optimizer"]["state"].keys() and b["optimizer"]["state"]
    again = resumed.save_checkpoint("again.pth.tar")
    assert again is not None
    state = torch.load(again, weights_only=True)
    assert state["components"]["clock"] == {"wall_seconds": 12.5} and state["envstep"] == 40
    # both go on alike from here (same batches: the same step)
    batches = replay.sample(1, 8, 3)
    learner.train(batches, envstep=48)
    resumed.train(batches, envstep=48)
    a, b = learner.learn_state()["model"], resumed.learn_state()["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_damaged_snapshot_is_one_line(tmp_path):
    path = tmp_path / "snap.pth.tar"
    path.write_bytes(b"not a snapshot")
    with pytest.raises(StrideError, match="cannot be read"):
        read_snapshot(str(path))


def test_collectors_of_different_index_or_incarnation_explore_differently(cfg):
    a = CollectorRole(cfg, "collector0", index=0).collect(None, 0, 0, 0)[1]
    b = CollectorRole(cfg, "collector1", index=1).collect(None, 0, 0, 0)[1]
    c = CollectorRole(cfg, "collector0", index=0, incarnation=1).collect(None, 0, 0, 0)[1]
    firsts = [tuple(d[0]["obs"].tolist()) for d in (a, b, c)]
    assert len(set(firsts)) == 3


def test_a_renewed_collector_is_its_new_incarnation_built_anew(cfg):
    """What a resumed -m dist run does to a collector whose name the replay saw: renewed, it collects
    exactly as a collector built as that incarnation (its seeds, its tags from seq 0)."""
    renewed = CollectorRole(cfg, "collector0", index=0)
    renewed.collect(None, 0, 0, 0)
    renewed.renew(2)
    meta, data = renewed.collect(None, 0, 0, 0)
    built_meta, built = CollectorRole(cfg, "collector0", index=0, incarnation=2).collect(None, 0, 0, 0)
    assert meta["tag"] == built_meta["tag"] == BatchTag("collector0", 2, 0, 0)
    assert len(data) == len(built) and all(np.array_equal(x[k], y[k]) for x, y in zip(data, built)
                                           for k in ("obs", "action", "reward"))


def test_system_config_defaults_and_errors():
    s = compile_system_config(par.system_config)
    assert (s.collector_num, s.learner_num, cpus_needed(s)) == (2, 1, 1.5)
    two = compile_system_config({"learner_num": 2, "learner_cpus": 0.25})
    assert cpus_needed(two) == 1.5  # each replica its own CPU share
    with pytest.raises(ConfigError, match="learner_num"):
        compile_system_config({"learner_num": 0})
    with pytest.raises(ConfigError, match="unknown config key 'system_config.colector_num'.*collector_num"):
        compile_system_config({"colector_num": 2})
    with pytest.raises(ConfigError, match="collector_num"):
        compile_system_config({"collector_num": 0})
    with pytest.raises(ConfigError, match="HOST:PORT"):
        compile_system_config({"address": "nohostport"})
    assert s.max_staleness == 1
    with pytest.raises(ConfigError, match="max_staleness"):
        compile_system_config({"max_staleness": -1})


def test_import_stride_and_the_serial_pipeline_never_import_ray():
    code = ("import sys, stride, stride.entry\n"
            "from stride.entry import serial_pipeline\n"
            "import stride.entry.parallel, stride.entry.parallel.roles, stride.entry.parallel.tags\n"
            "print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_collects_before_the_runs_warm_up_ends_act_uniformly_at_random(tmp_path):
    """An off-policy run's first ``policy.random_collect_size`` env steps are uniformly random actions
    on Ray too (the serial run's ``WarmUp``): a collect dispatched before the run's env step reaches
    it acts at random, whatever the weights; one dispatched at or after it acts with the policy."""
    import gymnasium as gym

    from stride.zoo.pendulum.config import pendulum_td3_config as td3

    main = copy.deepcopy(td3.main_config)
    main["policy"]["random_collect_size"] = 200
    main["policy"]["collect"].update(n_sample=200, noise_sigma=0.0)
    c = compile_config(main, create_cfg=copy.deepcopy(td3.create_config), seed=3, exp_name=str(tmp_path / "td3"),
                       save_cfg=False, action_space=gym.spaces.Box(-2.0, 2.0, (1,)))
    collector = CollectorRole(c, "collector0", index=0)
    try:
        state = collector.collect_state()
        # an actor of zeros acts 0 (tanh(0)) everywhere: any other action is the warm-up's
        zeros = {**state, "model": {k: torch.zeros_like(v) if k.startswith("actor.") else v
                                    for k, v in as_mapping(state["model"], "the collect state").items()}}
        warm = np.array([d["action"] for d in collector.collect(zeros, 1, envstep=0, train_iter=0)[1]]).ravel()
        assert len(warm) == 200 and np.abs(warm).max() > 0.9  # uniform over [-1, 1] (the policy's units)
        assert 0.3 < np.mean(np.abs(warm) > 0.5) < 0.7
        after = np.array([d["action"] for d in collector.collect(zeros, 1, envstep=200, train_iter=0)[1]]).ravel()
        assert len(after) == 200 and np.all(after == 0.0)
    finally:
        collector.close()
    again = CollectorRole(c, "collector0", index=0)  # the same collector started again: the same actions
    try:
        first = np.array([d["action"] for d in again.collect(None, 0, envstep=0, train_iter=0)[1]]).ravel()
        assert np.array_equal(first, warm)
    finally:
        again.close()
