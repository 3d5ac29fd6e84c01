"""stride.rl_utils.vtrace / vtrace_error against a slow reference, hand-computed numbers and the
on-policy identity (v-trace with ratios 1, lambda 1 and no clipping is the n-step bootstrapped return)."""

from __future__ import annotations

import math

import pytest
import torch

from stride.rl_utils import vtrace, vtrace_error


def reference_vtrace(target_lp, behaviour_lp, reward, value, bootstrap, terminated, gamma, lambda_, rho_clip, c_clip,
                     rho_pg_clip, mask=None):
    """The paper's definition as an explicit sum, element by element (no recursion):
    vs_s = V_s + sum_{t>=s} (prod_{i=s}^{t-1} gamma_i c_i) delta_t."""
    T, B = value.shape
    vs = [[0.0] * B for _ in range(T)]
    pg = [[0.0] * B for _ in range(T)]

    def clip(x, bound):
        return x if bound is None else min(bound, x)

    for b in range(B):
        rho = [0.0 if mask is not None and not mask[t, b] else math.exp(float(target_lp[t, b] - behaviour_lp[t, b]))
               for t in range(T)]
        disc = [gamma * (1.0 - float(terminated[t, b])) for t in range(T)]
        v = [float(value[t, b]) for t in range(T)] + [float(bootstrap[b])]
        delta = [clip(rho[t], rho_clip) * (float(reward[t, b]) + disc[t] * v[t + 1] - v[t]) for t in range(T)]
        for s in range(T):
            total = 0.0
            for t in range(s, T):
                prod = 1.0
                for i in range(s, t):
                    prod *= disc[i] * lambda_ * clip(rho[i], c_clip)
                total += prod * delta[t]
            vs[s][b] = v[s] + total
        for t in range(T):
            next_vs = vs[t + 1][b] if t + 1 < T else v[T]
            pg[t][b] = clip(rho[t], rho_pg_clip) * (float(reward[t, b]) + disc[t] * next_vs - v[t])
    return torch.tensor(vs, dtype=torch.float64), torch.tensor(pg, dtype=torch.float64)


def _random_inputs(T, B, seed):
    g = torch.Generator().manual_seed(seed)
    target = torch.randn(T, B, generator=g, dtype=torch.float64) * 0.7 - 1.0
    behaviour = torch.randn(T, B, generator=g, dtype=torch.float64) * 0.7 - 1.0  # ratios both below and above 1
    reward = torch.randn(T, B, generator=g, dtype=torch.float64)
    value = torch.randn(T, B, generator=g, dtype=torch.float64)
    bootstrap = torch.randn(B, generator=g, dtype=torch.float64)
    terminated = (torch.rand(T, B, generator=g) < 0.2).double()
    return target, behaviour, reward, value, bootstrap, terminated


@pytest.mark.parametrize("T,B", [(1, 1), (3, 2), (7, 5), (16, 3)])
@pytest.mark.parametrize("clips,lambda_", [((1.0, 1.0, 1.0), 1.0), ((1.0, 0.9, 2.0), 0.95), ((None, None, None), 0.8)])
def test_vtrace_matches_the_slow_reference(T, B, clips, lambda_):
    target, behaviour, reward, value, bootstrap, terminated = _random_inputs(T, B, seed=T * 100 + B)
    rho_clip, c_clip, rho_pg_clip = clips
    rho = (target - behaviour).exp()
    if rho_clip is not None:
        assert (rho > rho_clip).any() or T * B < 4  # the clipping is exercised
    out = vtrace(target, behaviour, reward, value, bootstrap, terminated, 0.9, lambda_, rho_clip, c_clip, rho_pg_clip)
    vs, pg = reference_vtrace(target, behaviour, reward, value, bootstrap, terminated, 0.9, lambda_, rho_clip, c_clip,
                              rho_pg_clip)
    torch.testing.assert_close(out.vs, vs)
    torch.testing.assert_close(out.pg_advantages, pg)


def test_vtrace_with_a_mask_matches_the_reference_and_the_shorter_unroll():
    target, behaviour, reward, value, bootstrap, terminated = _random_inputs(6, 3, seed=7)
    mask = torch.ones(6, 3)
    mask[4:, 0] = 0  # env 0's unroll has 4 real steps: x_4 is its bootstrap observation
    mask[1:, 2] = 0
    behaviour[5, 0] = -1e6  # garbage on padding (a ratio of inf) must not leak
    out = vtrace(target, behaviour, reward, value, bootstrap, terminated, 0.9, 0.95, 1.0, 1.0, 1.0, mask)
    vs, pg = reference_vtrace(target, behaviour, reward, value, bootstrap, terminated, 0.9, 0.95, 1.0, 1.0, 1.0, mask)
    torch.testing.assert_close(out.vs, vs)
    torch.testing.assert_close(out.pg_advantages, pg)
    short = vtrace(target[:4, :1], behaviour[:4, :1], reward[:4, :1], value[:4, :1], value[4, :1], terminated[:4, :1],
                   0.9, 0.95, 1.0, 1.0, 1.0)
    torch.testing.assert_close(out.vs[:4, :1], short.vs)
    torch.testing.assert_close(out.pg_advantages[:4, :1], short.pg_advantages)
    assert torch.equal(out.vs[4:, 0], value[4:, 0]) and torch.all(out.pg_advantages[4:, 0] == 0)


def _three_step(terminated):
    # ratios pi/mu = 0.5, 2, 1 (clipped to 0.5, 1, 1); gamma 0.9, lambda 1
    target = torch.log(torch.tensor([[0.5], [2.0], [1.0]]))
    return vtrace(target, torch.zeros(3, 1), torch.tensor([[1.0], [0.0], [2.0]]), torch.tensor([[1.0], [2.0], [3.0]]),
                  torch.tensor([4.0]), torch.tensor(terminated).view(3, 1), 0.9, 1.0, 1.0, 1.0, 1.0)


def test_vtrace_three_steps_by_hand():
    # delta = [0.5 (1 + 0.9*2 - 1), 1 (0 + 0.9*3 - 2), 1 (2 + 0.9*4 - 3)] = [0.9, 0.7, 2.6]
    # vs_2 = 3 + 2.6 = 5.6; vs_1 = 2 + 0.7 + 0.9*1*2.6 = 5.04; vs_0 = 1 + 0.9 + 0.9*0.5*3.04 = 3.268
    # pg = [0.5 (1 + 0.9*5.04 - 1), 1 (0 + 0.9*5.6 - 2), 1 (2 + 0.9*4 - 3)] = [2.268, 3.04, 2.6]
    out = _three_step([0.0, 0.0, 0.0])
    assert out.vs.flatten().tolist() == pytest.approx([3.268, 5.04, 5.6], abs=1e-5)
    assert out.pg_advantages.flatten().tolist() == pytest.approx([2.268, 3.04, 2.6], abs=1e-5)


def test_vtrace_termination_cuts_the_trace_by_hand():
    # step 1 terminates: delta_1 = 1 (0 + 0 - 2) = -2 and nothing flows back across it
    # vs_2 = 5.6 (a new episode); vs_1 = 2 - 2 = 0; vs_0 = 1 + 0.9 + 0.9*0.5*(-2) = 1
    # pg = [0.5 (1 + 0.9*0 - 1), 1 (0 - 2), 2.6] = [0, -2, 2.6]
    out = _three_step([0.0, 1.0, 0.0])
    assert out.vs.flatten().tolist() == pytest.approx([1.0, 0.0, 5.6], abs=1e-5)
    assert out.pg_advantages.flatten().tolist() == pytest.approx([0.0, -2.0, 2.6], abs=1e-5)


def test_on_policy_vtrace_is_the_nstep_bootstrapped_return():
    T, B, gamma = 6, 4, 0.95
    _, _, reward, value, bootstrap, terminated = _random_inputs(T, B, seed=3)
    lp = torch.randn(T, B, dtype=torch.float64)
    out = vtrace(lp, lp, reward, value, bootstrap, terminated, gamma, 1.0, None, None, None)
    for b in range(B):
        for s in range(T):
            ret, disc = 0.0, 1.0
            for t in range(s, T):
                ret += disc * float(reward[t, b])
                disc *= gamma * (1.0 - float(terminated[t, b]))
            ret += disc * float(bootstrap[b])  # disc is 0 once a termination was passed
            assert float(out.vs[s, b]) == pytest.approx(ret, abs=1e-9)
    torch.testing.assert_close(out.pg_advantages, out.vs - value)


def test_vtrace_error_terms_and_gradients():
    T, B, A = 5, 3, 4
    g = torch.Generator().manual_seed(0)
    logit = torch.randn(T, B, A, generator=g, requires_grad=True)
    value = torch.randn(T + 1, B, generator=g, requires_grad=True)
    action = torch.randint(0, A, (T, B), generator=g)
    behaviour = torch.log_softmax(torch.randn(T, B, A, generator=g), -1).gather(-1, action.unsqueeze(-1)).squeeze(-1)
    reward, terminated = torch.randn(T, B, generator=g), torch.zeros(T, B)
    terminated[2, 1] = 1.0
    mask = torch.ones(T, B)
    mask[3:, 1] = 0
    loss = vtrace_error(logit, action, behaviour, value, reward, terminated, 0.9, 0.95, 1.0, 1.0, 1.0, mask)
    lp = torch.log_softmax(logit.detach(), -1).gather(-1, action.unsqueeze(-1)).squeeze(-1)
    vs, pg = reference_vtrace(lp.double(), behaviour.double(), reward, value.detach()[:-1], value.detach()[-1],
                              terminated, 0.9, 0.95, 1.0, 1.0, 1.0, mask)
    n = mask.sum()
    entropy = -(torch.softmax(logit.detach(), -1) * torch.log_softmax(logit.detach(), -1)).sum(-1)
    assert loss.policy_loss.item() == pytest.approx(float(-(pg.float() * lp * mask).sum() / n), abs=1e-5)
    assert loss.value_loss.item() == pytest.approx(float(0.5 * ((vs.float() - value.detach()[:-1]) ** 2 * mask).sum() / n),
                                                   abs=1e-5)
    assert loss.entropy_loss.item() == pytest.approx(float((entropy * mask).sum() / n), abs=1e-5)
    (loss.policy_loss + loss.value_loss).backward()
    # targets are constants: the value gradient is (V - vs) / n on real steps, 0 on padding and on the bootstrap
    expected = torch.zeros(T + 1, B)
    expected[:-1] = (value.detach()[:-1] - vs.float()) * mask / n
    torch.testing.assert_close(value.grad, expected)
    assert torch.all(logit.grad[3:, 1] == 0)


def test_vtrace_error_continuous():
    T, B = 3, 2
    logit = {"mu": torch.zeros(T, B, 1), "sigma": torch.ones(T, B, 1)}
    action = torch.ones(T, B, 1)
    lp = torch.full((T, B), -0.5 - 0.5 * math.log(2 * math.pi))  # on-policy: log N(1; 0, 1)
    loss = vtrace_error(logit, action, lp, torch.zeros(T + 1, B), torch.ones(T, B), torch.zeros(T, B), 0.5,
                        1.0, None, None, None)
    # V = 0: vs_t = sum of 0.5^k rewards to the end: [1.75, 1.5, 1]; pg adv = vs (on-policy, V = 0)
    assert loss.value_loss.item() == pytest.approx(0.5 * (1.75**2 + 1.5**2 + 1.0) / 3, abs=1e-6)
    assert loss.policy_loss.item() == pytest.approx(-(1.75 + 1.5 + 1.0) / 3 * float(lp[0, 0]), abs=1e-5)
    assert loss.entropy_loss.item() == pytest.approx(0.5 * math.log(2 * math.pi * math.e), abs=1e-6)
