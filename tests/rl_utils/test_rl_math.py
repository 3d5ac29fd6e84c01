"""stride.rl_utils against numbers computed by hand (gamma/lambda chosen so the sums are exact)."""

from __future__ import annotations

import copy

import pytest
import torch

from stride.rl_utils import get_gae, get_nstep_return_data, q_nstep_td_error

# ---- GAE ----------------------------------------------------------------------------------------
# value=[1,2,3], next_value=[2,3,4], reward=[1,0,2], gamma=0.9, lambda=0.8 (gamma*lambda=0.72)
# deltas: 1+0.9*2-1=1.8, 0+0.9*3-2=0.7, 2+0.9*4-3=2.6
V = torch.tensor([1.0, 2.0, 3.0])
NV = torch.tensor([2.0, 3.0, 4.0])
R = torch.tensor([1.0, 0.0, 2.0])


def test_gae_no_episode_end():
    adv = get_gae(V, NV, R, torch.zeros(3), gamma=0.9, gae_lambda=0.8)
    # A2=2.6; A1=0.7+0.72*2.6=2.572; A0=1.8+0.72*2.572=3.65184
    assert adv.tolist() == pytest.approx([3.65184, 2.572, 2.6], abs=1e-5)


def test_gae_termination_masks_bootstrap_and_stops_accumulation():
    adv = get_gae(V, NV, R, torch.tensor([0.0, 1.0, 0.0]), gamma=0.9, gae_lambda=0.8)
    # delta1 = 0 - 2 = -2 (no bootstrap); A1=-2 (no accumulation across the end); A0=1.8+0.72*(-2)=0.36
    assert adv.tolist() == pytest.approx([0.36, -2.0, 2.6], abs=1e-5)


def test_gae_truncation_bootstraps_but_stops_accumulation():
    adv = get_gae(V, NV, R, torch.zeros(3), gamma=0.9, gae_lambda=0.8, traj_flag=torch.tensor([0.0, 1.0, 0.0]))
    # delta1 = 0.7 (bootstraps from the true final obs); A1=0.7; A0=1.8+0.72*0.7=2.304
    assert adv.tolist() == pytest.approx([2.304, 0.7, 2.6], abs=1e-5)


def test_gae_batch_columns_are_independent():
    value = torch.stack([V, V], 1)
    adv = get_gae(value, torch.stack([NV, NV], 1), torch.stack([R, R], 1),
                  torch.tensor([[0.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), gamma=0.9, gae_lambda=0.8)
    assert adv.shape == (3, 2)
    assert adv[:, 0].tolist() == pytest.approx([3.65184, 2.572, 2.6], abs=1e-5)
    assert adv[:, 1].tolist() == pytest.approx([0.36, -2.0, 2.6], abs=1e-5)


def test_gae_lambda_one_is_discounted_return_minus_value():
    # lambda=1, gamma=0.5, no end: A_t = sum_k 0.5^k r_{t+k} + 0.5^(T-t) * NV[-1] - V_t
    adv = get_gae(V, NV, R, torch.zeros(3), gamma=0.5, gae_lambda=1.0)
    expected = [1 + 0 + 0.25 * 2 + 0.125 * 4 - 1, 0 + 0.5 * 2 + 0.25 * 4 - 2, 2 + 0.5 * 4 - 3]
    assert adv.tolist() == pytest.approx(expected, abs=1e-5)


# ---- n-step ---------------------------------------------------------------------------------------
def _traj(rewards, dones):
    return [{"obs": t, "action": 0, "reward": float(r), "next_obs": t + 1, "done": d}
            for t, (r, d) in enumerate(zip(rewards, dones))]


def _view(out):
    return [(d["obs"], d["reward"], d["next_obs"], d["done"], d["value_gamma"]) for d in out]


def test_nstep_1_keeps_transitions_and_adds_value_gamma():
    data = _traj([1, 2, 3], [False, False, True])
    before = copy.deepcopy(data)
    out = get_nstep_return_data(data, 1, 0.5)
    assert _view(out) == [(0, 1.0, 1, False, 0.5), (1, 2.0, 2, False, 0.5), (2, 3.0, 3, True, 0.5)]
    assert data == before  # input untouched


def test_nstep_3_terminated_episode():
    data = _traj([1, 2, 3, 4, 5], [False] * 4 + [True])
    before = copy.deepcopy(data)
    out = get_nstep_return_data(data, 3, 0.5)
    assert _view(out) == [
        (0, 1 + 0.5 * 2 + 0.25 * 3, 3, False, 0.125),  # 2.75
        (1, 2 + 0.5 * 3 + 0.25 * 4, 4, False, 0.125),  # 4.5
        (2, 3 + 0.5 * 4 + 0.25 * 5, 5, True, 0.125),   # 6.25, window reaches the terminal step
        (3, 4 + 0.5 * 5, 5, True, 0.25),
        (4, 5.0, 5, True, 0.5),
    ]
    assert data == before
    assert out[0]["action"] == 0


def test_nstep_window_stops_at_termination_inside_it():
    data = _traj([1, 2, 3], [False, True, False])
    out = get_nstep_return_data(data, 3, 0.5)
    # window of t=0 stops at the terminal t=1: reward 1+0.5*2, next_obs/done from t=1
    assert _view(out)[0] == (0, 2.0, 2, True, 0.25)
    assert _view(out)[1] == (1, 2.0, 2, True, 0.5)


def test_nstep_truncated_tail_value_gamma_counts_real_steps():
    # a truncated episode: done stays False, the tail still bootstraps with gamma**real_steps
    data = _traj([1, 2, 3, 4], [False] * 4)
    out = get_nstep_return_data(data, 3, 0.5)
    assert _view(out) == [
        (0, 2.75, 3, False, 0.125),
        (1, 4.5, 4, False, 0.125),
        (2, 3 + 0.5 * 4, 4, False, 0.25),  # 2 real rewards -> gamma**2 (DI-engine gives gamma**1)
        (3, 4.0, 4, False, 0.5),
    ]


def test_nstep_equals_slow_reference():
    gamma, n = 0.9, 4
    rewards = [0.3, -1.0, 2.0, 0.5, 1.5, -0.2, 0.7]
    data = _traj(rewards, [False] * 6 + [True])
    out = get_nstep_return_data(data, n, gamma)
    for t, d in enumerate(out):
        m = min(n, len(rewards) - t)
        assert d["reward"] == pytest.approx(sum(gamma ** k * rewards[t + k] for k in range(m)))
        assert d["value_gamma"] == pytest.approx(gamma ** m)
        assert d["next_obs"] == t + m and d["done"] == (t + m == len(rewards))


def test_nstep_invalid():
    with pytest.raises(ValueError, match="nstep"):
        get_nstep_return_data(_traj([1], [True]), 0, 0.9)


# ---- TD error --------------------------------------------------------------------------------------
def _td_inputs():
    q = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    next_q_target = torch.tensor([[10.0, 20.0, 30.0], [1.0, 2.0, 3.0]])
    action = torch.tensor([0, 2])
    next_action = torch.tensor([1, 0])  # chosen by the online net: NOT the target's argmax (2)
    reward = torch.tensor([1.0, 2.0])
    done = torch.tensor([0.0, 1.0])
    return q, next_q_target, action, next_action, reward, done


def test_q_nstep_td_error_by_hand():
    q, nqt, a, na, r, d = _td_inputs()
    loss, td = q_nstep_td_error(q, nqt, a, na, r, d, 0.9)
    # target0 = 1 + 0.9*20 = 19 (double DQN: target net evaluated at the online argmax 1), q_sa0 = 1 -> td -18
    # target1 = 2 (done masks the bootstrap), q_sa1 = 6 -> td 4 ; loss = mean(0.5*324, 0.5*16) = 85
    assert loss.item() == pytest.approx(85.0)
    assert td.tolist() == pytest.approx([18.0, 4.0])
    assert not td.requires_grad
    loss.backward()
    assert torch.allclose(q.grad, torch.tensor([[-9.0, 0, 0], [0, 0, 2.0]]))  # d/dq of mean(0.5 td^2) = td / B


def test_q_nstep_td_error_is_weights_and_per_sample_gamma():
    q, nqt, a, na, r, d = _td_inputs()
    loss, _ = q_nstep_td_error(q, nqt, a, na, r, d, 0.9, weight=torch.tensor([0.5, 2.0]))
    assert loss.item() == pytest.approx((0.5 * 162 + 2.0 * 8) / 2)  # 48.5
    loss, td = q_nstep_td_error(q, nqt, a, na, r, torch.zeros(2), torch.tensor([0.5, 0.25]))
    # target0 = 1 + 0.5*20 = 11 -> td -10; target1 = 2 + 0.25*1 = 2.25 -> td 3.75
    assert td.tolist() == pytest.approx([10.0, 3.75])
    assert loss.item() == pytest.approx((50 + 0.5 * 3.75 ** 2) / 2)


def test_q_nstep_td_error_huber_and_unknown_loss():
    q, nqt, a, na, r, d = _td_inputs()
    loss, _ = q_nstep_td_error(q, nqt, a, na, r, d, 0.9, loss_type="huber")
    assert loss.item() == pytest.approx((17.5 + 3.5) / 2)
    with pytest.raises(ValueError, match="loss_type"):
        q_nstep_td_error(q, nqt, a, na, r, d, 0.9, loss_type="l3")


