"""stride.model.VAC: modes and shapes, discrete/continuous heads, shared/separate encoders, init."""

from __future__ import annotations

import math

import pytest
import torch

from stride.model import VAC
from stride.utils.registry import MODEL_REGISTRY


def test_registered():
    assert MODEL_REGISTRY.get("vac") is VAC


@pytest.mark.parametrize("share", [True, False])
def test_discrete_modes_and_shapes(share):
    torch.manual_seed(0)
    m = VAC(4, 3, share_encoder=share, encoder_hidden_size_list=[16, 16])
    obs = torch.randn(5, 4)
    assert m(obs, mode="compute_actor")["logit"].shape == (5, 3)
    assert set(m(obs, mode="compute_actor")) == {"logit"}
    assert m(obs, mode="compute_critic")["value"].shape == (5,)
    both = m(obs, mode="compute_actor_critic")
    assert both["logit"].shape == (5, 3) and both["value"].shape == (5,)
    assert torch.allclose(both["value"], m(obs, mode="compute_critic")["value"])
    assert torch.allclose(both["logit"], m(obs, mode="compute_actor")["logit"])


def test_continuous_head_is_gaussian_with_state_independent_sigma():
    m = VAC(3, 2, action_space="continuous", sigma_init=0.5, encoder_hidden_size_list=[8])
    logit = m(torch.randn(4, 3), mode="compute_actor")["logit"]
    assert set(logit) == {"mu", "sigma"} and logit["mu"].shape == (4, 2)
    assert torch.allclose(logit["sigma"], torch.full((4, 2), 0.5))
    assert m.log_sigma.requires_grad


def test_separate_encoders_do_not_share_parameters():
    shared = VAC(4, 2, share_encoder=True, encoder_hidden_size_list=[16])
    apart = VAC(4, 2, share_encoder=False, encoder_hidden_size_list=[16])
    assert shared.actor_encoder is shared.critic_encoder
    assert apart.actor_encoder is not apart.critic_encoder
    n = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert n(apart) - n(shared) == 4 * 16 + 16
    # critic loss leaves a separate actor encoder untouched
    apart(torch.randn(3, 4), mode="compute_critic")["value"].sum().backward()
    assert all(p.grad is None for p in apart.actor_encoder.parameters())


def test_orthogonal_init_zero_bias_small_actor_output():
    torch.manual_seed(0)
    m = VAC(4, 2, encoder_hidden_size_list=[64, 64])
    for mod in m.modules():
        if isinstance(mod, torch.nn.Linear):
            assert torch.all(mod.bias == 0)
    w = m.actor_encoder.net[0].weight  # (64, 4): orthonormal columns * sqrt(2)
    assert torch.allclose(w.T @ w, 2 * torch.eye(4), atol=1e-4)
    out_w = m.actor_head[-1].weight
    assert out_w.norm(dim=1).max().item() == pytest.approx(0.01, rel=1e-3)
    # near-uniform first policy
    probs = torch.softmax(m(torch.randn(16, 4), mode="compute_actor")["logit"], -1)
    assert torch.allclose(probs, torch.full_like(probs, 0.5), atol=0.05)
    assert math.isclose(m.critic_head[-1].weight.norm().item(), 1.0, rel_tol=1e-3)


def test_errors():
    with pytest.raises(ValueError, match="action_space"):
        VAC(4, 2, action_space="hybrid")
    with pytest.raises(ValueError, match="compute_actor"):
        VAC(4, 2)(torch.zeros(1, 4), mode="nope")
