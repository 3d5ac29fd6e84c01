"""Continuous-control TD targets: v_nstep_td_error and min_q_value vs hand-computed numbers."""

from __future__ import annotations

import pytest
import torch

from stride.rl_utils import min_q_value, v_nstep_td_error


def t(*x):
    return torch.tensor(x, dtype=torch.float32)


def test_v_nstep_td_error_by_hand():
    # targets: 0.5 + 0.9 * 3 = 3.2 (bootstraps), -1 (terminated: no bootstrap)
    loss, td = v_nstep_td_error(t(1.0, 2.0), t(3.0, 4.0), t(0.5, -1.0), t(0.0, 1.0), 0.9)
    assert torch.allclose(td, t(2.2, 3.0))
    assert loss.item() == pytest.approx(0.5 * (2.2**2 + 3.0**2) / 2)


def test_truncated_transition_bootstraps_and_terminated_does_not():
    # same transition, done = terminated flag only; a truncation (done=0) keeps gamma * V(s')
    _, td_trunc = v_nstep_td_error(t(0.0), t(10.0), t(1.0), t(0.0), 0.99)
    _, td_term = v_nstep_td_error(t(0.0), t(10.0), t(1.0), t(1.0), 0.99)
    assert td_trunc.item() == pytest.approx(1.0 + 9.9)
    assert td_term.item() == pytest.approx(1.0)


def test_per_sample_value_gamma_and_is_weights():
    # n-step: reward already summed, value_gamma = gamma ** real steps per sample
    loss, td = v_nstep_td_error(t(0.0, 0.0), t(1.0, 1.0), t(2.0, 3.0), t(0.0, 0.0), t(0.5, 0.25), weight=t(2.0, 0.0))
    assert torch.allclose(td, t(2.5, 3.25))
    assert loss.item() == pytest.approx((2.0 * 0.5 * 2.5**2 + 0.0) / 2)


def test_twin_critics_share_the_target_and_losses_add():
    value = t(1.0, 2.0).repeat(2, 1)
    value[1] = t(0.0, 0.0)
    loss, td = v_nstep_td_error(value, t(0.0, 0.0), t(1.0, 1.0), t(0.0, 0.0), 0.9)
    # critic 0: td (0, 1) -> 0.25 ; critic 1: td (-1, -1) -> 0.5
    assert loss.item() == pytest.approx(0.25 + 0.5)
    assert torch.allclose(td, t(0.5, 1.0))  # |td| averaged over critics


def test_no_gradient_flows_into_the_target():
    value = t(1.0, 2.0).requires_grad_()
    next_value = t(3.0, 4.0).requires_grad_()
    loss, _ = v_nstep_td_error(value, next_value, t(0.0, 0.0), t(0.0, 0.0), 0.9)
    loss.backward()
    assert next_value.grad is None
    # d/dv 0.5 * mean((v - y)^2) = (v - y) / B
    assert torch.allclose(value.grad, (t(1.0, 2.0) - 0.9 * t(3.0, 4.0)) / 2)


def test_huber_loss_and_bad_loss_type():
    loss, _ = v_nstep_td_error(t(0.0, 0.0), t(0.0, 0.0), t(0.5, 3.0), t(1.0, 1.0), 0.9, loss_type="huber")
    assert loss.item() == pytest.approx((0.5 * 0.25 + (3.0 - 0.5)) / 2)
    with pytest.raises(ValueError, match="loss_type 'l1'.*huber, mse"):
        v_nstep_td_error(t(0.0), t(0.0), t(0.0), t(0.0), 0.9, loss_type="l1")


def test_min_q_value_by_hand():
    q = torch.tensor([[1.0, 5.0, -2.0], [3.0, 4.0, -1.0]])
    assert torch.equal(min_q_value(q), t(1.0, 4.0, -2.0))
    assert torch.equal(min_q_value(t(1.0, 2.0)), t(1.0, 2.0))
    # soft value: min Q - alpha * log pi
    assert torch.allclose(min_q_value(q, t(-1.0, 0.5, 2.0), 0.2), t(1.2, 3.9, -2.4))
    assert torch.allclose(min_q_value(q, t(-1.0, 0.5, 2.0), torch.tensor(0.0)), t(1.0, 4.0, -2.0))


def test_soft_td_target_composed_by_hand():
    # SAC target: r + gamma * (1 - d) * (min(Q1', Q2') - alpha * logp')
    next_v = min_q_value(torch.tensor([[2.0, 1.0], [1.5, 3.0]]), t(-0.5, 1.0), 0.1)  # (1.55, 0.9)
    _, td = v_nstep_td_error(t(0.0, 0.0), next_v, t(1.0, 1.0), t(0.0, 1.0), 0.9)
    assert torch.allclose(td, t(1.0 + 0.9 * 1.55, 1.0))
