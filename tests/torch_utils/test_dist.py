"""stride.torch_utils.dist: process group set-up, weight broadcast, gradient averaging with indicators.

Two real gloo replicas (``torch.multiprocessing.spawn``) run every collective once; the parent checks
what each wrote against hand-computed numbers."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from torch import nn

from stride.torch_utils import dist as sdist
from stride.utils.errors import ConfigError

WORLD = 2


def _replica(rank: int, port: int, out: str) -> None:
    torch.set_num_threads(1)
    assert sdist.dist_init(rank=rank, world_size=WORLD, port=port, backend="gloo", timeout_s=60)
    try:
        assert not sdist.dist_init(rank=rank, world_size=WORLD, port=port)  # joined already: kept
        # broadcast: rank 1 starts from other weights (and another int buffer) and ends with rank 0's
        torch.manual_seed(rank)
        net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        net[1].num_batches_tracked.fill_(10 + rank)
        sdist.broadcast_module(net)
        # gradients: a on both ranks, b on rank 0 only, c on none, d (float64) on both
        a = nn.Parameter(torch.zeros(2, 2))
        b = nn.Parameter(torch.zeros(3))
        c = nn.Parameter(torch.zeros(1))
        d = nn.Parameter(torch.zeros(2, dtype=torch.float64))
        a.grad = torch.full((2, 2), float(rank + 1))  # 1 and 2 -> 1.5
        if rank == 0:
            b.grad = torch.tensor([3.0, 6.0, 9.0])  # only rank 0: its own gradient, not halved
        d.grad = torch.tensor([1.0, -1.0], dtype=torch.float64) * (rank + 1) * 2  # 2,-2 and 4,-4 -> 3,-3
        sdist.allreduce_gradients([a, b, c, d])
        flags = [sdist.any_rank(rank == 1), sdist.any_rank(False)]
        n, mean, var = sdist.moments(torch.tensor([1.0, 2.0]) if rank == 0 else torch.tensor([3.0, 4.0, 5.0]))
        sdist.check_same(7, "seven")
        try:
            sdist.check_same(rank, "the rank")
            same = "no error"
        except ConfigError as e:
            same = str(e)
        torch.save({"state": net.state_dict(), "a": a.grad, "b": b.grad, "c": c.grad, "d": d.grad, "flags": flags, "moments": [n, float(mean), float(var)], "same": same,
                    "rank": sdist.get_rank(), "world": sdist.get_world_size()}, os.path.join(out, f"{rank}.pt"))
    finally:
        sdist.dist_finalize()


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("dist"))
    torch.multiprocessing.spawn(_replica, args=(sdist.free_port(), out), nprocs=WORLD, join=True)
    return [torch.load(os.path.join(out, f"{r}.pt"), weights_only=True) for r in range(WORLD)]


def test_ranks_and_world_size(results):
    assert [(r["rank"], r["world"]) for r in results] == [(0, 2), (1, 2)]


def test_broadcast_gives_every_replica_rank0s_parameters_and_buffers(results):
    torch.manual_seed(0)
    expected = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).state_dict()
    for r in results:
        for k, v in expected.items():
            if k.endswith("num_batches_tracked"):
                assert int(r["state"][k]) == 10
            else:
                assert torch.equal(r["state"][k], v), k


def test_gradients_are_averaged_over_the_replicas_that_have_one(results):
    for r in results:
        assert torch.equal(r["a"], torch.full((2, 2), 1.5))
        assert torch.equal(r["b"], torch.tensor([3.0, 6.0, 9.0]))  # rank 1 had none: given rank 0's
        assert r["c"] is None  # nobody computed one: still none anywhere
        assert r["d"].dtype == torch.float64 and torch.equal(r["d"], torch.tensor([3.0, -3.0], dtype=torch.float64))


def test_moments_are_the_union_s(results):
    for r in results:  # 1..5: mean 3, biased variance (4 + 1 + 0 + 1 + 4) / 5
        assert r["moments"] == [5, 3.0, 2.0]


def test_check_same_names_the_disagreement(results):
    for rank, r in enumerate(results):
        assert r["same"] == f"learner replicas disagree on the rank: from 0 to 1 (this replica: {rank}); " \
                            "they must be equal on every replica"


def test_any_rank_is_shared(results):
    assert [r["flags"] for r in results] == [[True, False], [True, False]]


def test_single_process_is_the_identity():
    assert not sdist.in_process_group()
    assert (sdist.get_rank(), sdist.get_world_size()) == (0, 1)
    p = nn.Parameter(torch.zeros(2))
    p.grad = torch.tensor([1.0, 2.0])
    sdist.allreduce_gradients([p])
    assert torch.equal(p.grad, torch.tensor([1.0, 2.0]))
    assert sdist.any_rank(True) and not sdist.any_rank(False)
    n, mean, var = sdist.moments(torch.tensor([1.0, 2.0, 6.0]))
    assert (n, float(mean)) == (3, 3.0) and float(var) == pytest.approx(14.0 / 3, rel=1e-6)
    sdist.check_same(1, "anything")  # nothing to compare with
    sdist.dist_finalize()  # nothing to leave: no error


def test_no_launcher_is_one_line_saying_how_to_launch(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match="torchrun --standalone --nproc_per_node"):
        sdist.dist_init()
    with pytest.raises(ConfigError, match="MASTER_PORT unset"):
        sdist.dist_init(rank=0, world_size=1)


@pytest.mark.parametrize("kwargs, match", [
    (dict(rank=2, world_size=2, port=1), r"rank 2 is outside \[0, 1\]"),
    (dict(rank=0, world_size=1, port=1, backend="mpi"), "unknown torch.distributed backend 'mpi'; valid choices: gloo, nccl"),
])
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        sdist.dist_init(**kwargs)


def test_bad_rank_variable_is_named(monkeypatch):
    monkeypatch.setenv("RANK", "zero")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ConfigError, match="RANK='zero' is not a whole number"):
        sdist.dist_init()


def test_free_port_binds_loopback():
    port = sdist.free_port()
    assert 1024 <= port < 65536


def test_import_stride_does_not_import_ray():
    code = "import sys, stride, stride.torch_utils.dist, stride.policy, stride.entry; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
