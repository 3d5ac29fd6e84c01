"""FusedAdam: the direct kernel path gives exactly torch's fused Adam, and falls back when it must."""

import copy

import pytest
import torch

from stride.torch_utils.optimizer import FusedAdam, adam


def _net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))


def _train(net, opt, steps=6, seed=1):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x = torch.randn(8, 4, generator=g)
        loss = net(x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()


@pytest.mark.parametrize("kwargs", [{}, {"weight_decay": 0.01, "eps": 1e-5}, {"amsgrad": True, "maximize": True}])
def test_same_numbers_and_state_as_torch_fused_adam(kwargs):
    a, b = _net(), _net()
    oa = FusedAdam(a.parameters(), lr=1e-2, **kwargs)
    ob = torch.optim.Adam(b.parameters(), lr=1e-2, fused=True, **kwargs)
    _train(a, oa)
    _train(b, ob)
    assert oa._direct_calls() is not None  # the later steps took the direct path
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.equal(pa, pb)
    sa, sb = oa.state_dict(), ob.state_dict()
    for i in sb["state"]:
        for k in sb["state"][i]:
            assert torch.equal(sa["state"][i][k], sb["state"][i][k])


def test_resume_from_state_dict_matches_uninterrupted():
    a, b = _net(), _net()
    oa = FusedAdam(a.parameters(), lr=1e-2)
    _train(a, oa, steps=3)
    b.load_state_dict(a.state_dict())
    ob = FusedAdam(b.parameters(), lr=1e-2)
    ob.load_state_dict(copy.deepcopy(oa.state_dict()))
    _train(a, oa, steps=3, seed=5)
    _train(b, ob, steps=3, seed=5)
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.equal(pa, pb)


def test_falls_back_for_missing_grads_hooks_and_closures():
    torch.optim.Adam(_net().parameters())  # torch hooks Adam.step once a plain Adam exists
    net = _net()
    opt = FusedAdam(net.parameters(), lr=1e-2)
    _train(net, opt, steps=2)
    net[0].weight.grad = None  # a parameter without a gradient this step: Adam.step skips it
    assert opt._direct_calls() is None
    before = net[0].weight.detach().clone()
    opt.step()
    assert torch.equal(net[0].weight, before)
    calls = []
    handle = opt.register_step_post_hook(lambda *a: calls.append(1))
    _train(net, opt, steps=1)
    assert calls == [1]  # hooks run, once: Adam.step took it
    handle.remove()
    x = torch.randn(3, 4)

    def closure():
        opt.zero_grad()
        loss = net(x).sum()
        loss.backward()
        return loss

    assert isinstance(opt.step(closure), torch.Tensor)


def test_adam_factory_uses_it_on_cpu():
    assert isinstance(adam(_net().parameters(), lr=1e-3), FusedAdam)
