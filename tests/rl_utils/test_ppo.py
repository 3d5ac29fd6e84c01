"""stride.rl_utils.ppo_error / ppo_error_continuous against numbers computed by hand."""

from __future__ import annotations

import math

import pytest
import torch

from stride.rl_utils import ppo_error, ppo_error_continuous
from stride.rl_utils.ppo import policy_distribution, value_error

LN3 = math.log(3.0)
# pi_old = [0.5, 0.5] for both samples; pi_new = [0.75, 0.25] and [0.5, 0.5]; actions 0 and 1
# -> ratios 1.5 and 1.0
LOGIT_OLD = torch.zeros(2, 2)
LOGIT_NEW = torch.tensor([[LN3, 0.0], [0.0, 0.0]])
ACTION = torch.tensor([0, 1])
ADV = torch.tensor([1.0, -1.0])
V_NEW, V_OLD, RET = torch.tensor([1.0, 0.0]), torch.tensor([0.5, 0.0]), torch.tensor([2.0, 1.0])


def test_ppo_error_discrete_by_hand():
    loss, info = ppo_error(LOGIT_NEW, LOGIT_OLD, ACTION, V_NEW, V_OLD, ADV, RET, clip_ratio=0.2, value_clip_ratio=0.2)
    # surrogate: min(1.5*1, 1.2*1)=1.2 ; min(1*-1, 1*-1)=-1 -> loss -(1.2-1)/2
    assert loss.policy_loss.item() == pytest.approx(-0.1, abs=1e-6)
    # value: sample 0 max((1-2)^2, (0.5+0.2-2)^2=1.69); sample 1 max(1, 1) -> 0.5*(1.69+1)/2
    assert loss.value_loss.item() == pytest.approx(0.6725, abs=1e-6)
    # entropy: H(.75,.25)=0.562335, H(.5,.5)=ln 2
    assert loss.entropy_loss.item() == pytest.approx((0.5623351446 + math.log(2)) / 2, abs=1e-6)
    # k3 KL estimate: (r-1) - ln r = 0.5 - ln 1.5 and 0
    assert info.approx_kl.item() == pytest.approx((0.5 - math.log(1.5)) / 2, abs=1e-6)
    assert info.clipfrac.item() == pytest.approx(0.5)


def test_ppo_error_without_value_clip_and_gradients_flow():
    logit = LOGIT_NEW.clone().requires_grad_(True)
    value = V_NEW.clone().requires_grad_(True)
    loss, _ = ppo_error(logit, LOGIT_OLD, ACTION, value, V_OLD, ADV, RET, value_clip_ratio=None)
    assert loss.value_loss.item() == pytest.approx(0.5 * (1.0 + 1.0) / 2)
    (loss.policy_loss + loss.value_loss).backward()
    # sample 0 is clipped (ratio 1.5 > 1.2 with A > 0): no policy gradient through it
    assert torch.all(logit.grad[0] == 0) and torch.any(logit.grad[1] != 0)
    assert value.grad.tolist() == pytest.approx([0.5 * (1.0 - 2.0), 0.5 * (0.0 - 1.0)])


def test_ppo_error_dual_clip_bounds_negative_advantage():
    # pi_old(a=0)=0.25, pi_new(a=0)=0.75 -> ratio 3 with A=-1: surrogate min(-3, -1.2)=-3, dual clip c=2 -> -2
    old, new = torch.tensor([[0.0, LN3]]), torch.tensor([[LN3, 0.0]])
    args = (new, old, torch.tensor([0]), torch.zeros(1), torch.zeros(1), torch.tensor([-1.0]), torch.zeros(1))
    assert ppo_error(*args)[0].policy_loss.item() == pytest.approx(3.0, abs=1e-5)
    assert ppo_error(*args, dual_clip=2.0)[0].policy_loss.item() == pytest.approx(2.0, abs=1e-5)
    with pytest.raises(ValueError, match="dual_clip"):
        ppo_error(*args, dual_clip=1.0)


def test_ppo_error_continuous_by_hand():
    # N(0.5, 1) vs N(0, 1) at a=1: log ratio = -0.125 + 0.5 = 0.375 per dim; two dims -> 0.75
    new = {"mu": torch.full((1, 2), 0.5), "sigma": torch.ones(1, 2)}
    old = {"mu": torch.zeros(1, 2), "sigma": torch.ones(1, 2)}
    loss, info = ppo_error_continuous(new, old, torch.ones(1, 2), torch.zeros(1), torch.zeros(1), torch.tensor([2.0]),
                                      torch.zeros(1), clip_ratio=0.2)
    r = math.exp(0.75)
    assert loss.policy_loss.item() == pytest.approx(-min(r, 1.2) * 2.0, abs=1e-5)
    assert loss.entropy_loss.item() == pytest.approx(2 * 0.5 * math.log(2 * math.pi * math.e), abs=1e-5)
    assert info.approx_kl.item() == pytest.approx((r - 1) - 0.75, abs=1e-5)
    assert info.clipfrac.item() == 1.0


def test_policy_distribution_kinds():
    assert isinstance(policy_distribution(torch.zeros(3, 2)), torch.distributions.Categorical)
    d = policy_distribution({"mu": torch.zeros(3, 2), "sigma": torch.ones(3, 2)})
    assert d.log_prob(torch.zeros(3, 2)).shape == (3,)


def test_value_error_clip_only_limits_the_update():
    # V_old=0, V_new=1, R=0.5: unclipped error 0.25, clipped V=0.2 error 0.09 -> max 0.25
    assert value_error(torch.ones(1), torch.zeros(1), torch.tensor([0.5]), 0.2).item() == pytest.approx(0.125)


# ---- KL of the adaptive penalty --------------------------------------------------------------------
def test_kl_divergence_by_hand():
    from stride.rl_utils import kl_divergence

    old = torch.zeros(1, 2)  # p = (1/2, 1/2)
    new = torch.tensor([[math.log(3.0), 0.0]], requires_grad=True)  # p = (3/4, 1/4)
    kl = kl_divergence(old, new)
    # 1/2 ln(2/3) + 1/2 ln(2) = 0.14384104
    assert kl.tolist() == pytest.approx([0.14384104])
    kl.sum().backward()
    assert new.grad is not None and new.grad.abs().sum() > 0
    # N(0, 1) || N(1, 2): ln 2 + (1 + 1) / 8 - 1/2 = 0.44314718; a second, equal dimension adds 0
    g_old = {"mu": torch.tensor([[0.0, 3.0]]), "sigma": torch.tensor([[1.0, 0.5]])}
    g_new = {"mu": torch.tensor([[1.0, 3.0]]), "sigma": torch.tensor([[2.0, 0.5]])}
    assert kl_divergence(g_old, g_new).tolist() == pytest.approx([0.44314718])
    assert kl_divergence(g_old, g_old).tolist() == pytest.approx([0.0])


def test_adapt_kl_coef_doubles_halves_or_keeps():
    from stride.rl_utils import adapt_kl_coef

    # target 0.01: above 0.015 doubles, below 0.00667 halves, between (bounds included) keeps
    assert [adapt_kl_coef(1.0, kl, 0.01) for kl in (0.02, 0.015, 0.01, 0.0067, 0.006)] == [2.0, 1.0, 1.0, 1.0, 0.5]
