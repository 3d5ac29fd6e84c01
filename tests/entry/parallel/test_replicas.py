"""Learner replicas in ``-m parallel`` (``system_config.learner_num > 1``).

Without Ray: how a batch is cut between replicas, and two ``LearnerRole`` replicas (two processes,
one gloo group) on the halves of each batch against one learner on the whole batches (equal weights
within float tolerance). On Ray: a short CartPole DQN run with two learners ends with the replicas'
weights identical and every actor gone; slow: the same solves CartPole, Ctrl-C and a SIGKILLed
replica stop every actor.
"""

from __future__ import annotations

import copy
import json
import multiprocessing as mp
import os
import signal
import subprocess
import time

import numpy as np
import psutil
import pytest
import torch

from stride.config import compile_config
from stride.entry.parallel.training import replica_divergence
from stride.entry.parallel.pipeline import check_replicas
from stride.entry.parallel.roles import CollectorRole, LearnerRole, ReplayRole, Replica, shard_batch, shard_sampled
from stride.entry.parallel.system import compile_system_config
from stride.torch_utils.dist import free_port, in_process_group
from stride.utils.errors import ConfigError
from stride.zoo.cartpole.config.parallel import cartpole_dqn_config as par
from tests.entry.stride_process import STRIDE
from tests.processes import still_alive


def _cfg(tmp_path, name: str, batch_size: int = 8, multi_gpu: bool = False):
    main = copy.deepcopy(par.main_config)
    main["policy"]["learn"]["batch_size"] = batch_size
    main["policy"]["learn"]["multi_gpu"] = multi_gpu
    return compile_config(main, create_cfg=copy.deepcopy(par.create_config), seed=5, exp_name=str(tmp_path / name),
                          save_cfg=False)


# ---- cutting batches ------------------------------------------------------------------------
def test_shard_batch_cuts_columns_nested_columns_and_lists_into_equal_consecutive_parts():
    batch = {"obs": np.arange(12).reshape(6, 2), "act": torch.arange(6), "next": {"x": np.arange(6) * 10}}
    a, b, c = shard_batch(batch, 3)
    assert a["obs"].tolist() == [[0, 1], [2, 3]] and c["obs"].tolist() == [[8, 9], [10, 11]]
    assert b["act"].tolist() == [2, 3] and b["next"]["x"].tolist() == [20, 30]
    assert shard_batch([{"i": i} for i in range(4)], 2) == [[{"i": 0}, {"i": 1}], [{"i": 2}, {"i": 3}]]
    assert shard_batch(None, 2) == [None, None]  # a refused batch is refused on every replica
    assert shard_batch(batch, 1)[0]["obs"].tolist() == batch["obs"].tolist()


def test_shard_batch_refusals_are_one_line():
    with pytest.raises(ConfigError, match=r"batch of 6 rows cannot be split into 4 .*divisible by "
                                          r"system_config.learner_num=4"):
        shard_batch({"obs": np.zeros((6, 2))}, 4)
    with pytest.raises(ConfigError, match=r"different row counts \[5, 6\]"):
        shard_batch({"obs": np.zeros((6, 2)), "act": np.zeros(5)}, 2)
    with pytest.raises(ConfigError, match="column 'w' is a float"):
        shard_batch({"obs": np.zeros((6, 2)), "w": 1.0}, 2)
    with pytest.raises(ConfigError, match="shards=0"):
        shard_batch([1, 2], 0)


def test_sample_shards_cuts_the_batches_the_replay_would_draw(tmp_path):
    cfg = _cfg(tmp_path, "exp")
    data = CollectorRole(cfg, "collector0", index=0).collect(None, 0, 0, 0)[1]
    a, b = ReplayRole(cfg, snapshot_path=None), ReplayRole(cfg, snapshot_path=None)  # same seed: same draws
    for replay in (a, b):
        replay.push(data, 8, tag=par_tag())
    whole = a.sample(2, 8, 0)
    parts = b.sample_shards(2, 8, 0, shards=2)
    assert len(parts) == 2 and all(len(p) == 2 for p in parts)
    for k in range(2):
        joined = np.concatenate([parts[0][k][0]["obs"], parts[1][k][0]["obs"]])
        assert np.array_equal(joined, whole[k][0]["obs"])
        ids = np.concatenate([parts[0][k][1].ids, parts[1][k][1].ids])  # each part with its rows' ticket
        assert np.array_equal(ids, whole[k][1].ids) and len(parts[0][k][1].ids) == 4


def par_tag():
    from stride.entry.parallel.tags import BatchTag

    return BatchTag("collector0", 0, 0, 0)


def test_replica_settings_are_checked(tmp_path):
    sys_cfg = compile_system_config({"learner_num": 3})
    with pytest.raises(ConfigError, match="batch_size=8 does not split into system_config.learner_num=3"):
        check_replicas(_cfg(tmp_path, "a"), sys_cfg)
    with pytest.raises(ConfigError, match="policy.learn.multi_gpu=True: in -m parallel .*learner_num"):
        check_replicas(_cfg(tmp_path, "b", batch_size=9, multi_gpu=True), sys_cfg)
    check_replicas(_cfg(tmp_path, "c", batch_size=9), sys_cfg)
    with pytest.raises(ConfigError, match="multi_gpu=True but this learner is alone"):
        LearnerRole(_cfg(tmp_path, "d", multi_gpu=True))


def test_one_learner_makes_no_process_group(tmp_path):
    learner = LearnerRole(_cfg(tmp_path, "exp"))
    assert not in_process_group() and learner.rank == 0
    learner.finish()


def test_replica_divergence():
    a = {"model": {"w": torch.ones(2)}, "optimizer": {"state": {0: {"exp_avg": torch.zeros(2)}}, "lr": [0.1]}}
    b = copy.deepcopy(a)
    assert replica_divergence([a, b]) == 0.0 and replica_divergence([a]) == 0.0
    b["optimizer"]["state"][0]["exp_avg"][1] = -0.25
    assert replica_divergence([a, b]) == 0.25


# ---- two replicas (two processes, one gloo group) equal one learner on the whole batches ------
def _replica_main(rank: int, world: int, port: int, cfg, batches, out: str) -> None:
    torch.set_num_threads(1)
    role = LearnerRole(cfg, replica=Replica(rank, world, "127.0.0.1", port))
    result = role.train([shard_sampled(b, world)[rank] for b in batches], envstep=64)
    torch.save({"state": role.learn_state(), "train_iter": result["train_iter"]}, out)
    role.finish()


def test_two_replicas_on_halves_take_the_steps_one_learner_takes_on_the_whole_batches(tmp_path):
    cfg = _cfg(tmp_path, "single")
    replay = ReplayRole(cfg, snapshot_path=None)
    collector = CollectorRole(cfg, "collector0", index=0)
    for seq in range(3):
        meta, data = collector.collect(None, 0, 0, 0)
        replay.push(data, 8 * (seq + 1), tag=meta["tag"])
    batches = replay.sample(3, 8, 0)
    single = LearnerRole(cfg)
    initial = copy.deepcopy(single.learn_state()["model"])
    assert single.train(batches, envstep=64)["train_iter"] == 3
    expected = single.learn_state()["model"]
    assert any(not torch.equal(initial[k], expected[k]) for k in expected)  # the steps moved the weights

    multi = _cfg(tmp_path, "replicas", multi_gpu=True)
    port, ctx = free_port(), mp.get_context("spawn")
    outs = [str(tmp_path / f"rank{r}.pt") for r in range(2)]
    procs = [ctx.Process(target=_replica_main, args=(r, 2, port, multi, batches, outs[r])) for r in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
        if p.is_alive():
            p.kill()
    assert [p.exitcode for p in procs] == [0, 0]
    states = [torch.load(o, weights_only=False) for o in outs]
    assert [s["train_iter"] for s in states] == [3, 3]
    assert replica_divergence([s["state"] for s in states]) == 0.0  # the replicas stay identical
    got = states[0]["state"]["model"]
    for k in expected:
        torch.testing.assert_close(got[k], expected[k], rtol=1e-5, atol=1e-6)


# ---- on Ray ---------------------------------------------------------------------------------
def _config_file(tmp_path, stop_value: float, **system: object) -> str:
    pytest.importorskip("ray")
    main = copy.deepcopy(par.main_config)
    main["env"]["stop_value"] = stop_value
    sys_cfg = dict(par.system_config, learner_num=2, learner_cpus=0.25, **system)
    path = tmp_path / "cfg.py"
    path.write_text(f"main_config = {main!r}\ncreate_config = {par.create_config!r}\nsystem_config = {sys_cfg!r}\n")
    return str(path)


def _start(tmp_path, stop_value: float, *extra: str) -> subprocess.Popen:
    cmd = [*STRIDE, "-m", "parallel", "-c", _config_file(tmp_path, stop_value), "-s", "0",
           "--exp-name", str(tmp_path / "exp"), "--no-progress", *extra]
    return subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _descendants(proc: subprocess.Popen) -> list:
    try:
        return psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _learners(proc: subprocess.Popen) -> list:
    found = []
    for p in _descendants(proc):
        try:
            if "LearnerRole" in " ".join(p.cmdline()):
                found.append(p)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            pass
    return found


def _wait_for(cond, timeout: float, what: str, proc: subprocess.Popen):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        if proc.poll() is not None:
            pytest.fail(f"the run ended (rc {proc.returncode}) while waiting for {what}: {proc.stderr.read()[-2000:]}")
        time.sleep(0.3)
    proc.kill()
    proc.wait(60)
    pytest.fail(f"timed out waiting for {what}")


def _run_until_trained(tmp_path, stop_value: float, *extra: str):
    proc = _start(tmp_path, stop_value, *extra)
    _wait_for(lambda: len(_learners(proc)) == 2, 180, "two learner replicas", proc)
    log = tmp_path / "exp" / "log" / "learner.txt"  # rank 0's log; rank 1 writes none
    _wait_for(lambda: log.is_file() and log.stat().st_size > 0, 180, "training", proc)
    return proc, _descendants(proc)


@pytest.mark.slow  # ~31 s on Ray: outside CI's 25 minutes (the replicas' equivalence test and serial.md's torchrun run stay in CI)
def test_two_learners_train_in_step_and_leave_nothing(tmp_path):
    """A short run (400 env steps) with two learner replicas: it ends by itself at its limit with both
    replicas' weights and optimizer states identical after their updates and every Ray process gone."""
    proc = _start(tmp_path, 1e9, "--env-step", "400")
    _wait_for(lambda: len(_learners(proc)) == 2, 180, "two learner replicas", proc)
    pids = _descendants(proc)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert result["learners"] == 2 and result["replica_max_weight_diff"] == 0.0
    assert result["env_step"] >= 400 and result["train_iter"] >= 20 and result["duplicates"] == 0
    assert still_alive(pids) == []


@pytest.mark.slow
def test_two_learners_solve_cartpole_dqn(tmp_path):
    """The zoo's parallel DQN config with two learner replicas until its stop value (195) holds on
    the 100-episode confirmation: the run ends by itself, replicas identical, every process gone."""
    proc = _start(tmp_path, 195, "--env-step", "100000")
    _wait_for(lambda: len(_learners(proc)) == 2, 180, "two learner replicas", proc)
    pids = _descendants(proc)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-2000:]
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert result["stop"] and result["eval_return"] >= 195
    assert result["learners"] == 2 and result["replica_max_weight_diff"] == 0.0
    assert still_alive(pids) == []


@pytest.mark.slow
def test_ctrl_c_with_two_learners_saves_a_checkpoint_and_stops_every_actor(tmp_path):
    shm_before = set(os.listdir("/dev/shm"))
    proc, pids = _run_until_trained(tmp_path, 1e9, "--env-step", "2000000")
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C on a terminal does
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 130, err[-2000:]
    result = json.loads((tmp_path / "exp" / "result.json").read_text())
    assert result["interrupted"] and result["learners"] == 2 and result["replica_max_weight_diff"] == 0.0
    assert (tmp_path / "exp" / "ckpt" / "ckpt_latest.txt").is_file()
    assert still_alive(pids) == []
    assert set(os.listdir("/dev/shm")) <= shm_before


def _writes(p: psutil.Process, path) -> bool:
    """Whether process ``p`` holds ``path`` open (rank 0 alone keeps the learner's text log)."""
    try:
        return any(f.path == str(path) for f in p.open_files())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


@pytest.mark.slow
def test_a_killed_replica_stops_the_run_with_one_line_and_every_actor_gone(tmp_path):
    """Learner rank 1 SIGKILLed after the first checkpoint (an event: its file): exit 1 and one
    ``stride: error:`` line naming rank 1 and the latest checkpoint's path; every process of the run gone."""
    proc, _ = _run_until_trained(tmp_path, 1e9, "--env-step", "2000000")
    ckpt = tmp_path / "exp" / "ckpt"
    _wait_for(lambda: any(ckpt.glob("iteration_*.pth.tar")), 300, "the first checkpoint", proc)
    pids = _descendants(proc)
    log = tmp_path / "exp" / "log" / "learner.txt"
    rank1 = [p for p in _learners(proc) if not _writes(p, log)]
    assert len(rank1) == 1, "rank 0 is the one learner that keeps learner.txt open"
    rank1[0].send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err[-2000:]
    lines = [line for line in err.strip().splitlines() if line.startswith("stride: error:")]
    assert len(lines) == 1 and "learner replica rank 1 of 2 died (ActorDiedError" in lines[0], err[-2000:]
    assert "a replica cannot rejoin a running process group" in lines[0]
    latest = ckpt / (ckpt / "ckpt_latest.txt").read_text().strip()
    assert f"its latest checkpoint: {latest}" in lines[0] and latest.is_file()
    assert still_alive(pids) == []
