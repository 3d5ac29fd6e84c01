"""stride.rl_utils.a2c_error against numbers computed by hand."""

from __future__ import annotations

import math

import pytest
import torch

from stride.rl_utils import a2c_error


def test_a2c_error_discrete_by_hand():
    logit = torch.tensor([[math.log(3.0), 0.0]], requires_grad=True)  # pi = [0.75, 0.25]
    value = torch.tensor([1.0], requires_grad=True)
    adv = torch.tensor([2.0], requires_grad=True)
    loss = a2c_error(logit, torch.tensor([0]), value, adv, torch.tensor([3.0]))
    assert loss.policy_loss.item() == pytest.approx(-math.log(0.75) * 2.0, abs=1e-6)
    assert loss.value_loss.item() == pytest.approx(0.5 * 4.0)
    assert loss.entropy_loss.item() == pytest.approx(0.5623351446, abs=1e-6)
    (loss.policy_loss + loss.value_loss).backward()
    assert adv.grad is None or torch.all(adv.grad == 0)  # advantages are constants
    # d/dlogit of -2*log softmax_0 = -2 * (onehot - pi) = [-0.5, 0.5]
    assert logit.grad.tolist()[0] == pytest.approx([-0.5, 0.5])
    assert value.grad.item() == pytest.approx(-2.0)


def test_a2c_error_continuous_by_hand():
    logit = {"mu": torch.zeros(2, 1), "sigma": torch.ones(2, 1)}
    action, adv = torch.tensor([[1.0], [0.0]]), torch.tensor([1.0, -1.0])
    loss = a2c_error(logit, action, torch.zeros(2), adv, torch.zeros(2))
    # log N(1;0,1) = -0.5 - c, log N(0;0,1) = -c with c = log(2 pi) / 2 -> -mean(logp * adv) = -((-0.5 - c) - (-c)) / 2 = 0.25
    assert loss.policy_loss.item() == pytest.approx(0.25, abs=1e-6)
    assert loss.value_loss.item() == 0.0
