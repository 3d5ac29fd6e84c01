"""adam: torch's public Adam, fused where the device has the kernel, foreach otherwise."""

import copy

import torch

from stride.torch_utils.optimizer import adam


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


def test_fused_on_cpu_with_the_given_hyper_parameters():
    opt = adam(_net().parameters(), lr=1e-3, eps=1e-5)
    assert type(opt) is torch.optim.Adam
    group = opt.param_groups[0]
    assert group["fused"] is True and group["lr"] == 1e-3 and group["eps"] == 1e-5


def test_foreach_where_no_fused_kernel_applies():
    opt = adam([torch.zeros(3, dtype=torch.int64)], lr=1e-3)  # not floating point: no fused kernel
    assert not opt.param_groups[0]["fused"] and opt.param_groups[0]["foreach"] is True


def test_same_numbers_as_the_default_adam():
    a, b = _net(), _net()
    _train(a, adam(a.parameters(), lr=1e-2))
    _train(b, torch.optim.Adam(b.parameters(), lr=1e-2))
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.allclose(pa, pb, rtol=1e-5, atol=1e-6)


def test_resume_from_state_dict_matches_uninterrupted():
    a, b = _net(), _net()
    oa = adam(a.parameters(), lr=1e-2)
    _train(a, oa, steps=3)
    b.load_state_dict(a.state_dict())
    ob = adam(b.parameters(), lr=1e-2)
    ob.load_state_dict(copy.deepcopy(oa.state_dict()))
    _train(a, oa, steps=3, seed=5)
    _train(b, ob, steps=3, seed=5)
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.equal(pa, pb)


def _train_with(net, opt, steps=6, seed=1):
    from stride.torch_utils import step, zero_grad

    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x = torch.randn(8, 4, generator=g)
        loss = net(x).pow(2).mean()
        zero_grad(opt)
        loss.backward()
        step(opt)


import pytest  # noqa: E402


@pytest.mark.parametrize("kwargs", [{}, {"weight_decay": 0.01, "eps": 1e-5}, {"amsgrad": True, "maximize": True}])
@pytest.mark.parametrize("fused", [True, False])
def test_step_gives_exactly_what_optimizer_step_gives(kwargs, fused):
    from stride.torch_utils.optimizer import _functional_groups

    a, b = _net(), _net()
    make = (lambda p: torch.optim.Adam(p, lr=1e-2, fused=True, **kwargs)) if fused else \
        (lambda p: torch.optim.Adam(p, lr=1e-2, foreach=True, **kwargs))
    oa, ob = make(a.parameters()), make(b.parameters())
    _train_with(a, oa)
    _train(b, ob)
    assert _functional_groups(oa) is not None  # the later steps took the functional path
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.equal(pa, pb)
    sa, sb = oa.state_dict(), ob.state_dict()
    for i in sb["state"]:
        for k in sb["state"][i]:
            assert torch.equal(sa["state"][i][k], sb["state"][i][k])


def test_step_falls_back_to_optimizer_step_where_it_must():
    from stride.torch_utils import step, zero_grad
    from stride.torch_utils.optimizer import _functional_groups

    net = _net()
    opt = adam(net.parameters(), lr=1e-2)
    assert _functional_groups(opt) is None  # no state yet: the first step is Adam.step's
    _train_with(net, opt, steps=1)
    net[0].weight.grad = None
    assert _functional_groups(opt) is None  # a parameter without a gradient
    rms = torch.optim.RMSprop(_net().parameters(), lr=1e-2)
    assert _functional_groups(rms) is None  # another optimizer: its own step
    calls = []
    rms.register_step_post_hook(lambda *a: calls.append(1))
    net2 = _net()
    rms2 = torch.optim.RMSprop(net2.parameters(), lr=1e-2)
    rms2.register_step_post_hook(lambda *a: calls.append(1))
    net2(torch.randn(2, 4)).sum().backward()
    step(rms2)
    assert calls == [1]
    zero_grad(rms2)
    assert all(p.grad is None for p in net2.parameters())
