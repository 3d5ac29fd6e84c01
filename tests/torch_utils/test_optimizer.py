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
