"""Continuous-action wrappers: reparam_sample (plain and tanh-squashed, log-prob correction vs a
direct float64 computation), deterministic_sample, action_noise (gauss/OU, noise clip, action clamp)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from stride.model import QAC, model_wrap
from stride.model.wrapper import tanh_log_det_jacobian


class Gaussian(nn.Module):
    """A fixed Gaussian 'actor': returns the given mu/sigma for any input."""

    def __init__(self, mu, sigma):
        super().__init__()
        self.mu = nn.Parameter(torch.as_tensor(mu, dtype=torch.float32))
        self.sigma = torch.as_tensor(sigma, dtype=torch.float32)

    def forward(self, x):
        return {"mu": self.mu.expand(x.shape[0], -1), "sigma": self.sigma.expand(x.shape[0], -1)}


class Fixed(nn.Module):
    def __init__(self, out):
        super().__init__()
        self.out = out

    def forward(self, x):
        return {k: v.clone() for k, v in self.out.items()}


def _normal_log_prob64(u, mu, sigma):
    u, mu, sigma = u.double(), mu.double(), sigma.double()
    return (-0.5 * ((u - mu) / sigma) ** 2 - sigma.log() - 0.5 * math.log(2 * math.pi)).sum(-1)


def _replay_u(mu, sigma, seed):
    torch.manual_seed(seed)
    return mu + sigma * torch.randn_like(mu)


# ---- reparam_sample -------------------------------------------------------------------------------
def test_plain_reparam_log_prob_matches_normal():
    model = Gaussian([[0.3, -1.0]], [[0.5, 2.0]])
    w = model_wrap(model, "reparam_sample")
    torch.manual_seed(1)
    out = w.forward(torch.zeros(64, 1))
    mu, sigma = out["mu"], out["sigma"]
    assert torch.equal(out["action"], _replay_u(mu, sigma, 1))
    ref = torch.distributions.Normal(mu.double(), sigma.double()).log_prob(out["action"].double()).sum(-1)
    assert torch.allclose(out["log_prob"].double(), ref, atol=1e-5)


def test_tanh_reparam_log_prob_correction_vs_direct_computation():
    mu = torch.tensor([[0.2, -0.7, 1.5]])
    sigma = torch.tensor([[0.3, 0.8, 0.5]])
    w = model_wrap(Gaussian(mu, sigma), "reparam_sample", tanh=True)
    torch.manual_seed(7)
    out = w.forward(torch.zeros(256, 1))
    u = _replay_u(out["mu"], out["sigma"], 7).double()
    assert torch.allclose(out["action"].double(), torch.tanh(u), atol=1e-6)
    assert out["action"].abs().max() < 1.0
    # log pi(a) = log N(u) - sum log(1 - tanh(u)^2), computed directly in float64
    direct = _normal_log_prob64(u, out["mu"], out["sigma"]) - torch.log(1 - torch.tanh(u) ** 2).sum(-1)
    assert torch.allclose(out["log_prob"].double(), direct, atol=1e-4)
    # and the same as torch's own tanh-transformed distribution
    dist = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(out["mu"].double(), out["sigma"].double()), [torch.distributions.TanhTransform()])
    assert torch.allclose(out["log_prob"].double(), dist.log_prob(torch.tanh(u)).sum(-1), atol=1e-4)


def test_tanh_log_det_jacobian_is_stable_where_tanh_saturates():
    u = torch.linspace(-6, 6, 101, dtype=torch.float64)
    assert torch.allclose(tanh_log_det_jacobian(u), torch.log(1 - torch.tanh(u) ** 2), atol=1e-9)
    far = tanh_log_det_jacobian(torch.tensor([-40.0, 40.0]))
    assert torch.isfinite(far).all()
    # log(1 - tanh^2(u)) ~ log 4 - 2|u| for large |u|; an epsilon inside the log would floor it at log(1e-6)
    assert torch.allclose(far, torch.tensor([math.log(4) - 80.0] * 2), atol=1e-4)


def test_reparam_sample_is_differentiable_and_shares_parameters():
    model = Gaussian([[0.0]], [[1.0]])
    w = model_wrap(model, "reparam_sample", tanh=True)
    out = w.forward(torch.zeros(8, 1))
    (out["action"].sum() + out["log_prob"].sum()).backward()
    assert model.mu.grad is not None and model.mu.grad.abs().sum() > 0
    assert list(w.parameters()) == list(model.parameters())


def test_reparam_sample_on_qac_passes_the_mode_through():
    m = QAC(3, 2, action_space="reparameterization", actor_hidden_size_list=[8], critic_hidden_size_list=[8])
    out = model_wrap(m, "reparam_sample", tanh=True).forward(torch.randn(5, 3), mode="compute_actor")
    assert out["action"].shape == (5, 2) and out["log_prob"].shape == (5,)


# ---- deterministic_sample -------------------------------------------------------------------------
def test_deterministic_sample_is_the_mode():
    model = Gaussian([[0.5, -3.0]], [[1.0, 1.0]])
    out = model_wrap(model, "deterministic_sample").forward(torch.zeros(2, 1))
    assert torch.equal(out["action"], out["mu"])
    out = model_wrap(model, "deterministic_sample", tanh=True).forward(torch.zeros(2, 1))
    assert torch.equal(out["action"], torch.tanh(out["mu"]))
    again = model_wrap(model, "deterministic_sample", tanh=True).forward(torch.zeros(2, 1))
    assert torch.equal(out["action"], again["action"])


def test_deterministic_sample_keeps_an_existing_action():
    out = model_wrap(Fixed({"action": torch.tensor([[0.25]])}), "deterministic_sample", tanh=True).forward(torch.zeros(1))
    assert out["action"].item() == 0.25


# ---- action_noise ---------------------------------------------------------------------------------
def test_gauss_noise_is_clipped_then_action_clamped():
    base = torch.tensor([[0.9], [-0.2], [0.0]]).repeat(1000, 1)
    w = model_wrap(Fixed({"action": base}), "action_noise", noise_kwargs={"sigma": 10.0},
                   noise_range={"min": -0.5, "max": 0.5}, action_range={"min": -1.0, "max": 1.0})
    torch.manual_seed(0)
    a = w.forward(torch.zeros(1))["action"]
    assert (a - base).abs().max() <= 0.5 + 1e-6  # noise clipped
    assert a.max() <= 1.0 and a.min() >= -1.0  # action clamped
    assert (a[0::3] == 1.0).any()  # 0.9 + noise hits the action bound
    assert ((a[1::3] + 0.2).abs() > 0.49).float().mean() > 0.9  # sigma 10: almost always at the noise clip


def test_noise_is_out_of_place_and_unclamped_without_action_range():
    src = {"action": torch.zeros(500, 2)}
    model = Fixed(src)
    torch.manual_seed(0)
    a = model_wrap(model, "action_noise", noise_kwargs={"sigma": 3.0}, action_range=None).forward(torch.zeros(1))["action"]
    assert a.abs().max() > 1.0
    assert torch.equal(src["action"], torch.zeros(500, 2))
    assert abs(a.std().item() - 3.0) < 0.3


def test_sigma_kwarg_changes_noise_scale():
    w = model_wrap(Fixed({"action": torch.zeros(4000, 1)}), "action_noise", noise_kwargs={"sigma": 0.1}, action_range=None)
    torch.manual_seed(0)
    assert abs(w.forward(torch.zeros(1))["action"].std().item() - 0.1) < 0.01
    assert abs(w.forward(torch.zeros(1), sigma=0.5)["action"].std().item() - 0.5) < 0.05
    assert abs(w.forward(torch.zeros(1))["action"].std().item() - 0.5) < 0.05  # kept


def test_outputs_without_action_pass_through():
    out = model_wrap(Fixed({"q_value": torch.ones(3)}), "action_noise").forward(torch.zeros(1))
    assert set(out) == {"q_value"} and torch.equal(out["q_value"], torch.ones(3))


def test_ou_noise_follows_its_recurrence_and_resets():
    kw = {"mu": 0.0, "sigma": 0.3, "theta": 0.15, "dt": 0.01, "x0": 0.2}
    w = model_wrap(Fixed({"action": torch.zeros(2, 1)}), "action_noise", noise_type="ou", noise_kwargs=kw, action_range=None)
    torch.manual_seed(3)
    a1 = w.forward(torch.zeros(1))["action"]
    a2 = w.forward(torch.zeros(1))["action"]
    torch.manual_seed(3)
    n1, n2 = torch.randn(2, 1), torch.randn(2, 1)
    x1 = 0.2 + 0.15 * (0.0 - 0.2) * 0.01 + 0.3 * 0.1 * n1
    x2 = x1 + 0.15 * (0.0 - x1) * 0.01 + 0.3 * 0.1 * n2
    assert torch.allclose(a1, x1, atol=1e-6) and torch.allclose(a2, x2, atol=1e-6)
    w.reset()
    torch.manual_seed(3)
    assert torch.allclose(w.forward(torch.zeros(1))["action"], x1, atol=1e-6)


def test_unknown_noise_type_is_refused():
    with pytest.raises(ValueError, match="noise_type 'pink'.*gauss, ou"):
        model_wrap(Fixed({}), "action_noise", noise_type="pink")


def test_noise_wrapper_over_a_target_wrapper_forwards_update():
    m = QAC(3, 1, actor_hidden_size_list=[4], critic_hidden_size_list=[4])
    target = model_wrap(QAC(3, 1, actor_hidden_size_list=[4], critic_hidden_size_list=[4]), "target",
                        update_type="momentum", update_kwargs={"theta": 1.0})
    noisy = model_wrap(target, "action_noise", noise_kwargs={"sigma": 0.0})
    noisy.update(m)
    x = torch.randn(4, 3)
    assert torch.allclose(noisy.forward(x)["action"], m(x)["action"])
