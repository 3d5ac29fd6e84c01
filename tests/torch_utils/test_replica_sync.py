"""stride.torch_utils.replica_sync: the strategy an optimiser step is given (single process: the
identity); the two-replica equality is tests/policy/test_sync_gradients.py."""

from __future__ import annotations

import pytest
import torch

from stride.torch_utils.replica_sync import AllReduce, SingleProcess, optimise, replica_sync
from stride.utils.errors import ConfigError


def test_single_process_is_the_identity():
    sync = replica_sync(False, torch.nn.Linear(2, 2))
    assert type(sync) is SingleProcess and not sync.distributed
    p = torch.nn.Parameter(torch.zeros(3))
    p.grad = torch.tensor([1.0, 2.0, 3.0])
    sync.sync_gradients([p])
    assert torch.equal(p.grad, torch.tensor([1.0, 2.0, 3.0]))
    x = torch.tensor([1.0, 2.0, 3.0, 6.0])
    n, mean, var = sync.moments(x)
    assert n == 4 and mean.item() == pytest.approx(3.0) and var.item() == pytest.approx(3.5)
    z = sync.standardize(x)
    assert z.mean().item() == pytest.approx(0.0, abs=1e-6) and z.std().item() == pytest.approx(1.0, abs=1e-6)
    one = torch.tensor([5.0])
    assert sync.standardize(one) is one  # fewer than 2 elements: unchanged


def test_replicas_need_a_process_group():
    assert AllReduce.distributed
    with pytest.raises(ConfigError, match="needs a torch.distributed process group: launch one process per replica"):
        replica_sync(True, torch.nn.Linear(2, 2))


def test_optimise_steps_only_its_optimizers_parameters_and_returns_the_pre_clip_norm():
    torch.manual_seed(0)
    a, b = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(a.parameters(), lr=0.1)
    loss = (a(torch.ones(1, 2)) + b(torch.ones(1, 2))).sum() * 10
    b_before = [p.detach().clone() for p in b.parameters()]
    a_before = [p.detach().clone() for p in a.parameters()]
    norm = optimise(opt, loss, SingleProcess(), grad_clip_norm=1.0)
    assert norm is not None and norm.item() == pytest.approx(10 * 3 ** 0.5, rel=1e-5)  # grads 10, 10, 10
    assert all(p.grad is None for p in b.parameters())  # another network's .grad is left alone
    assert all(torch.equal(p, q) for p, q in zip(b.parameters(), b_before))
    moved = [(p - q).norm().item() for p, q in zip(a.parameters(), a_before)]
    assert sum(m ** 2 for m in moved) ** 0.5 == pytest.approx(0.1, rel=1e-5)  # clipped to norm 1, lr 0.1
    assert optimise(opt, a(torch.ones(1, 2)).sum(), SingleProcess()) is None
